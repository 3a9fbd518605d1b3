package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// accessLog logs one line per request: who, the verb, the path, the code answered and how
// long it took; never the body or the Authorization header. The trace of the request goes
// with the line through its context. A probe answered OK (a balancer asks /readyz every
// 2 s) is logged at debug level, so that it does not drown the requests.
func (s *server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err) // answer now, so the line has the code sent
		}
		r := c.Request()
		level := slog.LevelInfo
		if probes[r.URL.Path] && c.Response().Status < http.StatusBadRequest {
			level = slog.LevelDebug
		}
		s.log.Log(r.Context(), level, "access", "user", userOf(c).Name, "verb", r.Method, "path", r.URL.Path,
			"code", c.Response().Status, "duration", time.Since(start))
		return nil
	}
}

// probes are the paths health checkers poll.
var probes = map[string]bool{"/livez": true, "/healthz": true, "/readyz": true}
