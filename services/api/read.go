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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vmop/vmop/services/api/readmodel"
)

// get answers as kube-apiserver answers a GET: without resourceVersion the newest state
// (a consistent read), with "0" any, with another at least as new as it.
func (s *server) get(c echo.Context, t target) error {
	ctx := c.Request().Context()
	rv := c.QueryParam("resourceVersion")
	if err := checkRV(rv, readmodel.CheckRV, readModelRVForm); err != nil {
		return err
	}
	wait := s.waitCurrent
	if rv != "" {
		wait = func(ctx context.Context) error { return s.waitRV(ctx, rv) }
	}
	if err := wait(ctx); err != nil {
		return err
	}
	obj, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return notFound(t.gr(), t.Name)
	}
	if err != nil {
		return fmt.Errorf("read %s/%s: %w", t.Kind.Plural, t.Name, err)
	}
	if wantsTable(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.writeTable(c, t, [][]byte{obj.JSON}, metav1.ListMeta{})
	}
	served, err := s.reveal(ctx, t.Kind.Plural, obj.JSON, obj.SpecSeq)
	if err != nil {
		return err
	}
	return writeObject(c, t, http.StatusOK, served)
}

func (s *server) list(c echo.Context, t target) error {
	q := c.Request().URL.Query()
	lq, err := listQuery(q, false)
	if err != nil {
		return err
	}
	opts, err := listOptions(t, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	opts.Limit, opts.Continue = lq.Limit, lq.Continue
	// The read model keeps only its newest state: at least as new as the resourceVersion
	// asked for, exactly it only while nothing changed since.
	if err := s.waitRV(c.Request().Context(), lq.ResourceVersion); err != nil {
		return err
	}
	if lq.ResourceVersion == "" && lq.Continue == "" {
		if err := s.waitCurrent(c.Request().Context()); err != nil {
			return err
		}
	}
	if lq.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
		opts.ExactRV = lq.ResourceVersion
	}
	res, err := s.rm.List(opts)
	if errors.Is(err, readmodel.ErrGone) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", lq.ResourceVersion))
	}
	if errors.Is(err, readmodel.ErrInvalid) {
		return badRequest("%v", err)
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", t.Kind.Plural, err)
	}
	meta := metav1.ListMeta{ResourceVersion: res.RV, Continue: res.Continue}
	items := make([][]byte, len(res.Items))
	for i, o := range res.Items {
		items[i] = o.JSON
	}
	if wantsTable(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.writeTable(c, t, items, meta)
	}
	raw := make([]json.RawMessage, len(items))
	for i, o := range res.Items {
		served, err := s.reveal(c.Request().Context(), t.Kind.Plural, o.JSON, o.SpecSeq)
		if err != nil {
			return err
		}
		if raw[i], err = t.servedJSON(served); err != nil {
			return err
		}
	}
	return writeList(c, t, meta, raw)
}

// writeList answers a list of t's kind holding items, each already in t's shape. The
// items are stored JSON, valid and compact: they are joined as they are rather than run
// through the encoder, which would check and compact each again on every request.
func writeList(c echo.Context, t target, meta metav1.ListMeta, items []json.RawMessage) error {
	head, err := json.Marshal(struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Metadata   metav1.ListMeta `json:"metadata"`
	}{t.apiVersion(), t.Kind.ListKind, meta})
	if err != nil {
		return fmt.Errorf("encode %s: %w", t.Kind.ListKind, err)
	}
	size := len(head) + len(`,"items":[]}`)
	for _, item := range items {
		size += len(item) + 1
	}
	list := make([]byte, 0, size)
	list = append(append(list, head[:len(head)-1]...), `,"items":[`...)
	for i, item := range items {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, item...)
	}
	list = append(list, "]}"...)
	return writeServed(c, t, http.StatusOK, list)
}

func (s *server) writeTable(c echo.Context, t target, objs [][]byte, meta metav1.ListMeta) error {
	include, err := parseIncludeObject(c.QueryParam("includeObject"))
	if err != nil {
		return err
	}
	tbl, err := toTable(t.Kind, objs, meta, time.Now(), include)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tbl)
}

// listOptions turns query selectors into read-model options; a malformed selector is 400.
func listOptions(t target, labelSel, fieldSel string) (readmodel.ListOptions, error) {
	opts := readmodel.ListOptions{Plural: t.Kind.Plural, Namespace: t.Namespace}
	var err error
	if opts.Label, err = labels.Parse(labelSel); err != nil {
		return opts, badRequest("labelSelector: %v", err)
	}
	if opts.Fields, err = fields.ParseSelector(fieldSel); err != nil {
		return opts, badRequest("fieldSelector: %v", err)
	}
	for _, r := range opts.Fields.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return opts, badRequest("fieldSelector: field label not supported: %s", r.Field)
		}
	}
	return opts, nil
}
