package api

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// recoverPanics turns a handler's panic into a 500 Status, logged once with its stack,
// instead of a connection closed without an answer. (http.ErrAbortHandler is net/http's
// own way to abort a response and passes through.)
func (s *server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if e, ok := r.(error); ok && errors.Is(e, http.ErrAbortHandler) {
				panic(r)
			}
			s.log.Error("request panicked", "method", c.Request().Method, "path", c.Request().URL.Path,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = apierrors.NewInternalError(errors.New("internal error"))
		}()
		return next(c)
	}
}
