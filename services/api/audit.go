package api

import (
	"errors"

	"github.com/labstack/echo/v4"
)

// auditNameKey holds the name of an object a create named in its body (or generated).
const auditNameKey = "vmop.audit.name"

// audit runs a write (create, update, patch, delete, an action) and logs one line about
// it: who, which verb on which object, and the HTTP code it answered; never the body,
// which may hold secrets (cloud-init data).
func (s *server) audit(c echo.Context, t target, verb string, write func() error) error {
	err := write()
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
	name := t.Name
	if name == "" {
		name, _ = c.Get(auditNameKey).(string)
	}
	dry, _ := dryRun(c)
	s.log.Info("audit", "user", userOf(c).Name, "verb", verb, "group", t.Kind.Group, "resource", t.Kind.Plural,
		"subresource", t.Subresource, "namespace", t.Namespace, "name", name, "dryRun", dry, "code", code)
	return err
}
