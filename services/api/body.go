package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// readBody reads at most maxBody bytes; more is 413 and nothing is stored.
func readBody(c echo.Context) ([]byte, error) {
	r := http.MaxBytesReader(c.Response(), c.Request().Body, maxBody)
	data, err := io.ReadAll(r)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, apierrors.NewRequestEntityTooLargeError("limit is 3145728 bytes")
	}
	if err != nil {
		return nil, badRequest("read request body: %v", err)
	}
	return data, nil
}

// decodeObject parses a JSON, YAML or (for built-in kinds, protobuf.go) protobuf object body
// for t; malformed input is 400.
func decodeObject(c echo.Context, t target) (map[string]any, error) {
	data, err := readBody(c)
	if err != nil {
		return nil, err
	}
	contentType := c.Request().Header.Get(echo.HeaderContentType)
	if isProtobuf(contentType) {
		return decodeProtobuf(t, data)
	}
	if strings.Contains(contentType, "yaml") {
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return nil, badRequest("the request body is not valid YAML: %v", err)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, badRequest("the request body is not a valid JSON object: %v", err)
	}
	return obj, nil
}
