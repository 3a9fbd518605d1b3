package api

import (
	"time"

	"github.com/labstack/echo/v4"
)

// accessLog logs one line per request: who, the verb, the path, the code answered and how
// long it took; never the body or the Authorization header. The trace of the request goes
// with the line through its context.
func (s *server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err) // answer now, so the line has the code sent
		}
		r := c.Request()
		s.log.InfoContext(r.Context(), "access", "user", userOf(c).Name, "verb", r.Method, "path", r.URL.Path,
			"code", c.Response().Status, "duration", time.Since(start))
		return nil
	}
}
