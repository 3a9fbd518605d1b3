package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
)

// auditNameKey holds the name of an object a create named in its body (or generated).
const auditNameKey = "vmop.audit.name"

// audit runs a write (create, update, patch, delete, an action) and logs one line about
// it: who, which verb on which object, and the HTTP code it answered (500 for a panic,
// which goes on to recoverPanics); never the body, which may hold secrets (cloud-init).
func (s *server) audit(c echo.Context, t target, verb string, write func() error) error {
	panicked := true
	defer func() {
		if panicked {
			s.auditLine(c, t, verb, http.StatusInternalServerError)
		}
	}()
	err := write()
	panicked = false
	code := c.Response().Status
	if err != nil {
		failure := err
		var he *echo.HTTPError
		if errors.As(err, &he) {
			failure = httpErrorStatus(he)
		}
		st, _ := asStatus(failure)
		code = int(st.Code)
	}
	s.auditLine(c, t, verb, code)
	return err
}

func (s *server) auditLine(c echo.Context, t target, verb string, code int) {
	name := t.Name
	if name == "" {
		name, _ = c.Get(auditNameKey).(string)
	}
	dry, _ := dryRun(c)
	s.log.Info("audit", "user", userOf(c).Name, "verb", verb, "group", t.Kind.Group, "resource", t.Kind.Plural,
		"subresource", t.Subresource, "namespace", t.Namespace, "name", name, "dryRun", dry, "code", code)
}
