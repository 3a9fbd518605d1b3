package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vmop/vmop/services/api/openapi"
)

// OpenAPI documents let kubectl explain fields, validate client-side and detect that the
// server validates fields itself (so it sends fieldValidation=Strict).

// openAPIV2 answers in protobuf when asked (kubectl decodes nothing else), else JSON.
func (s *server) openAPIV2(c echo.Context) error {
	doc, contentType := openapi.V2For(c.Request().Header.Get(echo.HeaderAccept))
	return c.Blob(http.StatusOK, contentType, doc)
}

func (s *server) openAPIV3Root(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapi.V3Root())
}

func (s *server) openAPIV3GroupVersion(c echo.Context) error {
	doc, ok := openapi.V3GroupVersion(strings.TrimPrefix(c.Request().URL.Path, "/openapi/v3/"))
	if !ok {
		return notFoundPath()
	}
	c.Response().Header().Set("Cache-Control", "public, immutable")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc)
}
