package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// A handler that panics answers a 500 Status, logged once, and the next request is
// served as usual.
func TestHandlerPanicIsA500(t *testing.T) {
	var logs bytes.Buffer
	s := &server{log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: newMetrics(nil, nil, newWatchLimit(1))}
	e := s.routes()
	e.GET("/panics", func(echo.Context) error { panic("a bug") })

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/panics", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"kind":"Status"`) ||
		!strings.Contains(rec.Body.String(), `"reason":"InternalError"`) {
		t.Errorf("panicking handler: %d %s, want a 500 Status", rec.Code, rec.Body)
	}
	if n := strings.Count(logs.String(), "request panicked"); n != 1 || !strings.Contains(logs.String(), "a bug") {
		t.Errorf("logged %d lines, want the panic once:\n%s", n, logs.String())
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/livez", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("the next request: %d %s", rec.Code, rec.Body)
	}
}
