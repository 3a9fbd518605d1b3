package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/kubeevents"
)

// eventFeed is where the Events kinds are served from: the EVENTS stream folded by
// kubeevents, and the stream itself, which a read without resourceVersion waits for.
type eventFeed struct {
	store *kubeevents.Store
	js    jetstream.JetStream
}

// serveEvents serves get, list and watch of the read-only Events kinds (the caller has
// authorized the verb); anything else is 405, as for any verb a resource does not offer.
func (s *server) serveEvents(c echo.Context, t target, verb string) error {
	switch verb {
	case "get":
		return s.getEvent(c, t)
	case "list":
		return s.listEvents(c, t)
	case "watch":
		return s.watchEvents(c, t)
	}
	return apierrors.NewMethodNotSupported(t.gr(), c.Request().Method)
}

func (s *server) getEvent(c echo.Context, t target) error {
	ev, err := s.events.store.Get(t.Namespace, t.Name)
	if errors.Is(err, kubeevents.ErrNotFound) {
		return notFound(t.gr(), t.Name)
	}
	if err != nil {
		return err
	}
	if wantsTable(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.writeEventTable(c, [][]byte{ev}, metav1.ListMeta{})
	}
	if ev, err = eventIn(t, ev); err != nil {
		return err
	}
	return writeServed(c, t, http.StatusOK, ev)
}

func (s *server) listEvents(c echo.Context, t target) error {
	q := c.Request().URL.Query()
	if _, err := listQueryOf(q, false, checkEventRV, eventRVForm); err != nil {
		return err
	}
	sel, none, err := eventSelectors(q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	opts := kubeevents.ListOptions{Namespace: t.Namespace, Fields: sel, Continue: q.Get("continue")}
	if v := q.Get("limit"); v != "" {
		if opts.Limit, err = strconv.ParseInt(v, 10, 64); err != nil || opts.Limit < 0 {
			return badRequest("limit must be a non-negative integer")
		}
	}
	if q.Get("resourceVersion") == "" && opts.Continue == "" {
		if err := s.events.store.Sync(c.Request().Context(), s.events.js); err != nil {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("events are not current: %v", err))
		}
	}
	res, err := s.events.store.List(opts)
	if errors.Is(err, kubeevents.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return err
	}
	if none {
		res.Items, res.Continue = nil, ""
	}
	meta := metav1.ListMeta{ResourceVersion: res.RV, Continue: res.Continue}
	if wantsTable(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.writeEventTable(c, res.Items, meta)
	}
	items := make([]json.RawMessage, len(res.Items))
	for i, ev := range res.Items {
		if items[i], err = eventIn(t, ev); err != nil {
			return err
		}
	}
	return writeList(c, t, meta, items)
}

// watchEvents streams Events as the watch of any kind does (watch.go): JSON lines, or
// one-row Tables for kubectl get -w; with sendInitialEvents the current Events are
// followed by the bookmark that marks their end.
func (s *server) watchEvents(c echo.Context, t target) error {
	q := c.Request().URL.Query()
	if _, err := listQueryOf(q, true, checkEventRV, eventRVForm); err != nil {
		return err
	}
	sel, none, err := eventSelectors(q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	ctx, done, err := s.startWatch(c)
	if err != nil {
		return err
	}
	defer done()
	rv, fromRV := q.Get("resourceVersion"), q.Get("resourceVersion")
	initialEvents := q.Get("sendInitialEvents") == "true"
	if initialEvents {
		fromRV = "" // the current Events are at least as new as any resourceVersion asked for
	}
	changes, err := s.events.store.Watch(ctx, kubeevents.WatchOptions{
		Namespace: t.Namespace, Fields: sel, FromRV: fromRV, InitialEventsEnd: initialEvents,
	})
	switch {
	case errors.Is(err, kubeevents.ErrGone):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", rv))
	case errors.Is(err, kubeevents.ErrInvalid):
		return badRequest("%v", err)
	case err != nil:
		return err
	}
	table := wantsTable(c.Request().Header.Get(echo.HeaderAccept))
	w := c.Response()
	out := s.watchWriter(w)
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	if err := out.send(func() error { w.WriteHeader(http.StatusOK); return nil }); err != nil {
		return nil // client went away
	}
	enc := json.NewEncoder(w)
	for ch := range changes {
		if none && ch.Type != kubeevents.Bookmark {
			continue
		}
		obj, err := watchedEvent(t, ch, table)
		if err != nil {
			return err
		}
		if err := out.send(func() error {
			return enc.Encode(metav1.WatchEvent{Type: ch.Type, Object: runtime.RawExtension{Raw: obj}})
		}); err != nil {
			return nil // client went away, or stopped reading
		}
	}
	return nil
}

// watchedEvent is the object of one watch event: the Event in t's shape, a one-row
// Table, or the initial-events-end bookmark.
func watchedEvent(t target, ch kubeevents.Change, table bool) ([]byte, error) {
	switch {
	case ch.Type == kubeevents.Bookmark:
		return json.Marshal(map[string]any{
			"apiVersion": t.apiVersion(), "kind": t.Kind.Kind,
			"metadata": map[string]any{
				"resourceVersion": ch.RV,
				"annotations":     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			},
		})
	case table:
		tbl, err := kubeevents.Table([][]byte{ch.Event}, metav1.ListMeta{ResourceVersion: ch.RV}, time.Now())
		if err != nil {
			return nil, err
		}
		return json.Marshal(tbl)
	}
	return eventIn(t, ch.Event)
}

func (s *server) writeEventTable(c echo.Context, items [][]byte, meta metav1.ListMeta) error {
	tbl, err := kubeevents.Table(items, meta, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tbl)
}

// eventIn is a stored (v1) Event in the shape of the group t addresses.
func eventIn(t target, v1 []byte) ([]byte, error) {
	if t.Kind.Group == model.GroupEvents {
		return kubeevents.EventsV1(v1)
	}
	return v1, nil
}

// eventSelectors reads a watch's or list's selectors. Events carry no labels: a label
// selector that an unlabelled object fails selects none of them (none).
func eventSelectors(labelSel, fieldSel string) (sel fields.Selector, none bool, err error) {
	ls, err := labels.Parse(labelSel)
	if err != nil {
		return nil, false, badRequest("labelSelector: %v", err)
	}
	if sel, err = fields.ParseSelector(fieldSel); err != nil {
		return nil, false, badRequest("fieldSelector: %v", err)
	}
	return sel, !ls.Matches(labels.Set{}), nil
}

// startWatch bounds a watch of a read-only kind by its timeoutSeconds and counts it against
// the user's watches, as every watch (watch.go); done ends both.
func (s *server) startWatch(c echo.Context) (ctx context.Context, done func(), err error) {
	ctx, cancel := context.WithCancel(c.Request().Context())
	if v := c.Request().URL.Query().Get("timeoutSeconds"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < 0 {
			cancel()
			return nil, nil, badRequest("timeoutSeconds must be a non-negative integer")
		}
		if secs > 0 { // 0 is the server's default, as in kube-apiserver: no timeout of the client's
			cancel()
			ctx, cancel = context.WithTimeout(c.Request().Context(), time.Duration(secs)*time.Second)
		}
	}
	release, err := s.watches.acquire(userOf(c).Name)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, func() { release(); cancel() }, nil
}

// An Event's resourceVersion is its EVENTS sequence.
const eventRVForm = `"" or an EVENTS sequence`

func checkEventRV(rv string) error {
	if rv == "" {
		return nil
	}
	_, err := strconv.ParseUint(rv, 10, 64)
	return err
}
