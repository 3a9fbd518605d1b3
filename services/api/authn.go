package api

import (
	"fmt"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const userKey = "vmop.user"

// authenticate resolves the bearer token; no or an unknown token is 401.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, ok := s.auth.authenticate(c.Request().Header.Get("Authorization"))
		if !ok {
			return apierrors.NewUnauthorized("Unauthorized")
		}
		c.Set(userKey, u)
		return next(c)
	}
}

func userOf(c echo.Context) User {
	u, _ := c.Get(userKey).(User)
	return u
}

// authorize replaces Kubernetes RBAC with the rules of api-rules §0.3 and §1: privileged
// callers may do everything; ordinary users work only inside their namespaces, may read
// cluster-scoped kinds, and may not write privileged kinds or status.
func (s *server) authorize(u User, t target, verb string) error {
	if s.auth.privileged(u) {
		return nil
	}
	write := verb != "get" && verb != "list" && verb != "watch"
	gr := schema.GroupResource{Group: t.Kind.Group, Resource: t.Kind.Plural}
	switch {
	case t.Kind.Namespaced && t.Namespace == "":
		return apierrors.NewForbidden(gr, "", fmt.Errorf("User %q cannot %s resource %q in API group %q at the cluster scope",
			u.Name, verb, t.Kind.Plural, t.Kind.Group))
	case t.Kind.Namespaced && !s.auth.mayAccessNamespace(u, t.Namespace):
		return apierrors.NewForbidden(gr, t.Name, fmt.Errorf("User %q cannot %s resource %q in API group %q in the namespace %q",
			u.Name, verb, t.Kind.Plural, t.Kind.Group, t.Namespace))
	case write && (t.Kind.PrivilegedWrite || !t.Kind.Namespaced):
		return apierrors.NewForbidden(gr, t.Name, fmt.Errorf("User %q cannot %s %s: only privileged users may write them",
			u.Name, verb, t.Kind.Plural))
	case write && t.Subresource == "status":
		return apierrors.NewForbidden(gr, t.Name, fmt.Errorf("User %q cannot %s status: only vmop services write status", u.Name, verb))
	}
	return nil
}
