package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vmop/vmop/services/api/readmodel"
)

// watch streams changes as Kubernetes watch events ({"type", "object"} per line), from
// the given resourceVersion or, with sendInitialEvents (the default without one), starting
// with the current objects as ADDED, then with allowWatchBookmarks the bookmark that ends
// them (kube's watch-list) and periodic bookmarks. With the Table Accept header each
// object is a one-row Table, as kubectl get -w asks.
func (s *server) watch(c echo.Context, t target) error {
	q := c.Request().URL.Query()
	lq, err := listQuery(q, true)
	if err != nil {
		return err
	}
	opts, err := listOptions(t, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	include, err := parseIncludeObject(q.Get("includeObject"))
	if err != nil {
		return err
	}
	ctx, done, err := s.startWatch(c)
	if err != nil {
		return err
	}
	defer done()
	wo := readmodel.WatchOptions{
		Plural: opts.Plural, Namespace: opts.Namespace, Label: opts.Label, Fields: opts.Fields,
		FromRV: lq.ResourceVersion,
	}
	if lq.SendInitialEvents != nil && *lq.SendInitialEvents {
		// The initial events show a state not older than the resourceVersion asked for.
		if err := s.waitRV(ctx, lq.ResourceVersion); err != nil {
			return err
		}
		if lq.ResourceVersion == "" {
			if err := s.waitCurrent(ctx); err != nil {
				return err
			}
		}
		wo.FromRV, wo.SendInitial, wo.InitialEventsEnd = "", true, lq.AllowWatchBookmarks
	}
	if lq.AllowWatchBookmarks {
		wo.BookmarkEvery = s.bookmarkEvery
	}
	changes, err := s.rm.Watch(ctx, wo)
	if errors.Is(err, readmodel.ErrGone) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", lq.ResourceVersion))
	}
	if errors.Is(err, readmodel.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return fmt.Errorf("watch %s: %w", t.Kind.Plural, err)
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
		obj, err := s.watchObject(ctx, t, ch, table, include)
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

// watchObject is the object of one watch event as served: the object (secrets revealed,
// converted to the addressed version) or a one-row Table whose row carries what include
// asks; for a bookmark only the kind and resourceVersion, and the annotation that ends the
// initial events.
func (s *server) watchObject(ctx context.Context, t target, ch readmodel.Change, table bool, include includeObject) ([]byte, error) {
	if ch.Type == readmodel.Bookmark {
		return bookmarkObject(t, ch, table)
	}
	if table {
		tbl, err := toTable(t.Kind, [][]byte{ch.Object}, metav1.ListMeta{ResourceVersion: ch.RV}, time.Now(), include)
		if err != nil {
			return nil, err
		}
		obj, err := json.Marshal(tbl)
		if err != nil {
			return nil, fmt.Errorf("encode watch table: %w", err)
		}
		return obj, nil
	}
	specSeq, _ := specSeqOf(ch.RV)
	obj, err := s.reveal(ctx, t.Kind.Plural, ch.Object, specSeq)
	if err != nil {
		return nil, err
	}
	return t.servedJSON(obj)
}

func bookmarkObject(t target, ch readmodel.Change, table bool) ([]byte, error) {
	if table {
		tbl, err := toTable(t.Kind, nil, metav1.ListMeta{ResourceVersion: ch.RV}, time.Now(), includeNone)
		if err != nil {
			return nil, err
		}
		return json.Marshal(tbl)
	}
	meta := metav1.ObjectMeta{ResourceVersion: ch.RV}
	if ch.InitialEventsEnd {
		meta.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	obj, err := json.Marshal(metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: t.apiVersion(), Kind: t.Kind.Kind}, ObjectMeta: meta,
	})
	if err != nil {
		return nil, fmt.Errorf("encode bookmark: %w", err)
	}
	return obj, nil
}

// watchWriter writes a watch's events, which outlive the server's request timeout: the
// watch's request was read (no read deadline remains) and each write, flush included,
// must end within the request timeout, so a client that stops reading is cut off
// without the watch being cut while it waits for changes.
type watchWriter struct {
	rc      *http.ResponseController
	timeout time.Duration
}

func (s *server) watchWriter(w http.ResponseWriter) watchWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // errors only when the connection cannot: nothing to undo then
	return watchWriter{rc: rc, timeout: s.requestTimeout}
}

// send runs write and flushes it, within the timeout.
func (ww watchWriter) send(write func() error) error {
	if err := ww.rc.SetWriteDeadline(time.Now().Add(ww.timeout)); err != nil {
		return fmt.Errorf("set write deadline: %w", err)
	}
	if err := write(); err != nil {
		return err
	}
	if err := ww.rc.Flush(); err != nil {
		return err
	}
	return ww.rc.SetWriteDeadline(time.Time{}) // waiting for the next change is no write
}
