package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vmop/vmop/pkg/model"
)

// readOnlyKind resolves the read-only kinds (model.ReadOnlyKinds), which are not among the
// stored kinds.
func readOnlyKind(group, version, plural string) (model.Kind, bool) {
	for _, k := range model.ReadOnlyKinds() {
		if k.Group == group && k.Version == version && k.Plural == plural {
			return k, true
		}
	}
	return model.Kind{}, false
}

// serveReadOnly serves get, list and watch of a read-only kind (the caller has authorized
// the verb).
func (s *server) serveReadOnly(c echo.Context, t target, verb string) error {
	if t.Kind.Kind == "Pod" {
		return s.servePods(c, t, verb)
	}
	return s.serveEvents(c, t, verb)
}

// servePods answers for the Pods vmop does not run: none. A list is empty, a get 404, a
// watch stays open without events (after the initial-events bookmark when asked) until
// its timeout, as a watch of an empty namespace would.
func (s *server) servePods(c echo.Context, t target, verb string) error {
	if verb == "list" || verb == "watch" {
		if _, err := listQuery(c.Request().URL.Query(), verb == "watch"); err != nil {
			return err
		}
	}
	switch verb {
	case "get":
		return notFound(t.gr(), t.Name)
	case "list":
		meta := metav1.ListMeta{ResourceVersion: s.rm.RV()}
		if wantsTable(c.Request().Header.Get(echo.HeaderAccept)) {
			return s.writeTable(c, t, nil, meta)
		}
		return writeList(c, t, meta, []json.RawMessage{})
	case "watch":
		return s.watchNoPods(c, t)
	}
	return apierrors.NewMethodNotSupported(t.gr(), c.Request().Method)
}

func (s *server) watchNoPods(c echo.Context, t target) error {
	ctx, done, err := s.startWatch(c)
	if err != nil {
		return err
	}
	defer done()
	w := c.Response()
	out := s.watchWriter(w)
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	if err := out.send(func() error { w.WriteHeader(http.StatusOK); return nil }); err != nil {
		return nil // client went away
	}
	if c.Request().URL.Query().Get("sendInitialEvents") == "true" {
		bookmark, err := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": t.Kind.Kind,
			"metadata": map[string]any{
				"resourceVersion": s.rm.RV(),
				"annotations":     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			},
		})
		if err != nil {
			return fmt.Errorf("encode bookmark: %w", err)
		}
		if err := out.send(func() error {
			return json.NewEncoder(w).Encode(metav1.WatchEvent{Type: "BOOKMARK", Object: runtime.RawExtension{Raw: bookmark}})
		}); err != nil {
			return nil
		}
	}
	<-ctx.Done()
	return nil
}
