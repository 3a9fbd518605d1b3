package api

import (
	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/services/api/auth"
)

const userKey = "vmop.user"

// authority is what the HTTP surface asks of auth: who calls, and what they may do.
type authority interface {
	Authenticate(header string) (auth.User, bool)
	Privileged(u auth.User) bool
	Authorize(u auth.User, r auth.Access) error
}

// authenticate resolves the bearer token; no or an unknown token is 401.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, ok := s.auth.Authenticate(c.Request().Header.Get("Authorization"))
		if !ok {
			return apierrors.NewUnauthorized("Unauthorized")
		}
		c.Set(userKey, u)
		return next(c)
	}
}

func userOf(c echo.Context) auth.User {
	u, _ := c.Get(userKey).(auth.User)
	return u
}

// authorize asks auth whether u may do verb on t (api-rules §0.3 and §1).
func (s *server) authorize(u auth.User, t target, verb string) error {
	return s.auth.Authorize(u, auth.Access{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, Subresource: t.Subresource, Verb: verb})
}
