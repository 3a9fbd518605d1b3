package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resource serves every /api and /apis path: group-version discovery, and the verbs on
// collections, objects and their status subresource, and the actions (actions.go).
func (s *server) resource(c echo.Context) error {
	path := c.Request().URL.Path
	if segs := strings.Split(strings.Trim(path, "/"), "/"); len(segs) == 2 && segs[0] == "apis" {
		return s.group(c, segs[1])
	}
	if group, ver, ok := groupVersionPath(path); ok {
		list, found := resourceList(group, ver)
		if !found {
			return notFoundPath()
		}
		return c.JSON(http.StatusOK, list)
	}
	if r, ok := selfReviewAt(path); ok {
		return s.serveSelfReview(c, r)
	}
	t, ok := parseTarget(path)
	if ok && isAction(t) {
		return s.audit(c, t, "update", func() error { return s.action(c, t) })
	}
	if !ok || (t.Subresource != "" && (t.Subresource != "status" || !t.Kind.HasStatus)) {
		return notFoundPath()
	}
	q := c.Request().URL.Query()
	verb := verbOf(c.Request().Method, t, q.Get("watch"))
	if verb == "" || t.Kind.ReadOnly && verb != "get" && verb != "list" && verb != "watch" {
		return apierrors.NewMethodNotSupported(t.gr(), c.Request().Method)
	}
	if verb != "get" && verb != "list" && verb != "watch" {
		return s.audit(c, t, verb, func() error { return s.serveVerb(c, t, verb) })
	}
	return s.serveVerb(c, t, verb)
}

// serveVerb authorizes the verb on t and serves it.
func (s *server) serveVerb(c echo.Context, t target, verb string) error {
	if err := s.authorize(userOf(c), t, verb); err != nil {
		return err
	}
	if t.Kind.ReadOnly {
		return s.serveReadOnly(c, t, verb)
	}
	if verb == "create" || verb == "update" || verb == "patch" {
		ctx, release := s.quotas.Defer(c.Request().Context(), t.Kind, t.Namespace)
		defer release() // once the write is folded (respondStored)
		c.SetRequest(c.Request().WithContext(ctx))
	}
	switch verb {
	case "get":
		return s.get(c, t)
	case "list":
		return s.list(c, t)
	case "watch":
		return s.watch(c, t)
	case "create":
		return s.create(c, t)
	case "update":
		return s.update(c, t)
	case "patch":
		return s.patch(c, t)
	default:
		return s.delete(c, t)
	}
}

// verbOf maps method and target to the Kubernetes verb; "" when unsupported.
func verbOf(method string, t target, watch string) string {
	collection := t.Name == ""
	switch {
	case method == http.MethodGet && collection && (watch == "true" || watch == "1"):
		return "watch"
	case method == http.MethodGet && collection:
		return "list"
	case method == http.MethodGet:
		return "get"
	case method == http.MethodPost && collection && t.Subresource == "":
		return "create"
	case method == http.MethodPut && !collection:
		return "update"
	case method == http.MethodPatch && !collection:
		return "patch"
	case method == http.MethodDelete && !collection && t.Subresource == "":
		return "delete"
	}
	return ""
}

// groupVersionPath recognises /api/v1 and /apis/<group>/<version>.
func groupVersionPath(path string) (group, ver string, ok bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) == 2 && segs[0] == "api":
		return "", segs[1], true
	case len(segs) == 3 && segs[0] == "apis":
		return segs[1], segs[2], true
	case len(segs) == 2 && segs[0] == "apis":
		return "", "", false
	}
	return "", "", false
}

func notFoundPath() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
	}}
}

func notFound(gr schema.GroupResource, name string) error { return apierrors.NewNotFound(gr, name) }
