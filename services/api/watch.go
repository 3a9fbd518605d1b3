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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vmop/vmop/services/api/readmodel"
)

// watch streams changes as Kubernetes watch events ({"type", "object"} per line), from
// the given resourceVersion or, without one, starting with the current objects as ADDED.
// With the Table Accept header each object is a one-row Table, as kubectl get -w asks.
func (s *server) watch(c echo.Context, t target) error {
	q := c.Request().URL.Query()
	opts, err := listOptions(t, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	rv := q.Get("resourceVersion")
	ctx := c.Request().Context()
	if v := q.Get("timeoutSeconds"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < 0 {
			return badRequest("timeoutSeconds must be a non-negative integer")
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
		defer cancel()
	}
	changes, err := s.rm.Watch(ctx, readmodel.WatchOptions{
		Plural: opts.Plural, Namespace: opts.Namespace, Label: opts.Label, Fields: opts.Fields,
		FromRV: rv, SendInitial: rv == "" || rv == "0",
	})
	if errors.Is(err, readmodel.ErrGone) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", rv))
	}
	if errors.Is(err, readmodel.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return fmt.Errorf("watch %s: %w", t.Kind.Plural, err)
	}
	table := wantsTable(c.Request().Header.Get(echo.HeaderAccept))
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	w.WriteHeader(http.StatusOK)
	w.Flush()
	enc := json.NewEncoder(w)
	for ch := range changes {
		obj, err := t.servedJSON(ch.Object)
		if err != nil {
			return err
		}
		if table {
			tbl, err := toTable(t.Kind, [][]byte{ch.Object}, metav1.ListMeta{ResourceVersion: ch.RV}, time.Now())
			if err != nil {
				return err
			}
			if obj, err = json.Marshal(tbl); err != nil {
				return fmt.Errorf("encode watch table: %w", err)
			}
		}
		if err := enc.Encode(metav1.WatchEvent{Type: ch.Type, Object: runtime.RawExtension{Raw: obj}}); err != nil {
			return nil // client went away
		}
		w.Flush()
	}
	return nil
}
