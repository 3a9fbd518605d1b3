package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/admission"
	"github.com/vmop/vmop/services/api/apply"
	"github.com/vmop/vmop/services/api/console"
	"github.com/vmop/vmop/services/api/readmodel"
)

// maxBody is Kubernetes' request size limit; larger bodies get 413.
const maxBody = 3 << 20

// server holds what the HTTP handlers call; nothing else.
type server struct {
	auth    authority
	specs   *specWriter
	rm      *readmodel.Store
	heads   *readmodel.Heads // where the streams end, for consistent reads
	events  eventFeed        // the Events kinds
	admit   admitter
	quotas  quotaGate
	fields  *apply.Managers
	log     *slog.Logger
	metrics *metrics

	requestTimeout time.Duration // each request's reading and writing; each write of a watch
	watches        *watchLimit
	bookmarkEvery  time.Duration // how often a watch allowing bookmarks gets one
	seeded         chan struct{} // closed once the seeded inventory is in the read model
}

// quotaGate orders the writes that charge a namespace's storage quotas: one at a time,
// each until the read model has folded it, so the next one's admission counts it.
// Admission takes a write's hold (quota.Take) only when the write charges more storage.
type quotaGate interface {
	Defer(ctx context.Context, k model.Kind, namespace string) (context.Context, func())
}

// admitter is admission as the handlers of writes use it.
type admitter interface {
	Admit(ctx context.Context, r *admission.Request) error
}

// routes builds the echo instance: discovery and OpenAPI, health, and every resource
// path (parsed by parseTarget rather than by one route per kind).
func (s *server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.writeError
	e.Use(s.measure, s.accessLog, s.recoverPanics)

	e.GET("/livez", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/readyz", s.readyz)

	// The console's assets need no token; every API call the page makes carries one.
	ui := echo.WrapHandler(console.Handler())
	e.GET("/", ui)
	e.GET(console.Prefix+"*", ui)
	e.GET(strings.TrimSuffix(console.Prefix, "/"), func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, console.Prefix)
	})

	authed := e.Group("", s.authenticate)
	authed.GET("/version", s.version)
	authed.GET("/metrics", s.serveMetrics)
	authed.GET("/api", s.coreVersions)
	authed.GET("/apis", s.groups)
	authed.GET("/openapi/v2", s.openAPIV2)
	authed.GET("/openapi/v3", s.openAPIV3Root)
	authed.GET("/openapi/v3/*", s.openAPIV3GroupVersion)
	authed.Any("/api/*", s.resource)
	authed.Any("/apis/*", s.resource)
	return e
}

// readyLag is how far behind the streams a ready gateway's read model may be: it reaches
// the streams' heads, read when the probe came, within this.
const readyLag = 2 * time.Second

// readyz is ready when the gateway can answer a consistent read now: the read model has
// caught up since the start, holds the seeded inventory, follows the streams, and
// reaches where they end within readyLag (which also shows that NATS answers). A
// balancer sends requests only to ready gateways.
func (s *server) readyz(c echo.Context) error {
	if !s.rm.CaughtUp() {
		return c.String(http.StatusServiceUnavailable, "read model catching up")
	}
	select {
	case <-s.seeded:
	default:
		return c.String(http.StatusServiceUnavailable, "seeding the inventory")
	}
	if !s.rm.Following() {
		return c.String(http.StatusServiceUnavailable, "read model not following the streams (NATS unreachable?)")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyLag)
	defer cancel()
	if err := s.rm.WaitCurrent(ctx, s.heads); err != nil {
		return c.String(http.StatusServiceUnavailable, fmt.Sprintf("read model behind the streams (at %s): %v", s.rm.RV(), err))
	}
	return c.String(http.StatusOK, "ok")
}

// writeError is the one place errors become HTTP responses: Status objects with the
// right code; only unexpected errors are logged (and hidden as 500s).
func (s *server) writeError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		err = httpErrorStatus(he)
	}
	st, known := asStatus(err)
	if !known {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	st.Kind, st.APIVersion = "Status", "v1"
	if d := st.Details; d != nil && d.RetryAfterSeconds > 0 {
		// As kube-apiserver says it: client-go and kubectl wait that long and ask again (a
		// read model catching up after a NATS node was lost, a write's timeout, a watch limit).
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	if t, ok := parseTarget(c.Request().URL.Path); ok && t.speaksProtobuf() && wantsProtobuf(c) {
		_ = writeProtobuf(c, int(st.Code), &st)
		return
	}
	body, _ := json.Marshal(st)
	_ = c.JSONBlob(int(st.Code), body)
}

// httpErrorStatus turns echo's own errors (unknown route, wrong method) into Statuses.
func httpErrorStatus(he *echo.HTTPError) error {
	reason := metav1.StatusReasonUnknown
	msg := http.StatusText(he.Code)
	switch he.Code {
	case http.StatusNotFound:
		reason, msg = metav1.StatusReasonNotFound, "the server could not find the requested resource"
	case http.StatusMethodNotAllowed:
		reason = metav1.StatusReasonMethodNotAllowed
	case http.StatusUnauthorized:
		reason = metav1.StatusReasonUnauthorized
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: int32(he.Code), Reason: reason, Message: msg,
	}}
}
