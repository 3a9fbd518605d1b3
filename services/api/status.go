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

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api/auth"
	"github.com/vmop/vmop/services/api/readmodel"
)

// writeStatus lets a service identity replace its own status slice over REST; only the
// body's status is used (api-rules §1). Services normally publish slices on NATS directly.
func (s *server) writeStatus(c echo.Context, t target, obj map[string]any) error {
	u := userOf(c)
	service, ok := auth.Service(u)
	if !ok {
		return apierrors.NewForbidden(t.gr(), t.Name, fmt.Errorf("only vmop services write status"))
	}
	dry, err := dryRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	_, cur, found, err := s.specs.live(ctx, t)
	if err != nil {
		return err
	}
	if !found {
		return notFound(t.gr(), t.Name)
	}
	if rv := metaString(obj, "resourceVersion"); rv != "" {
		if ctx, err = s.statusSince(ctx, t, service, rv); err != nil {
			return err
		}
	}
	t.toHub(obj) // services write slices in the hub version; unknown fields are dropped
	status, err := json.Marshal(obj["status"])
	if err != nil {
		return badRequest("status: %v", err)
	}
	cur["status"] = obj["status"] // the object's events carry its spec and status together
	if err := s.checkSize(cur, 0); err != nil {
		return err
	}
	if dry {
		return writeHubObject(c, t, http.StatusOK, cur) // every check made, nothing published
	}
	seq, err := events.PublishStatus(ctx, s.specs.js, t.ref(), events.Slice{
		Service: service, UID: metaString(cur, "uid"), Generation: generation(cur), Status: status,
	})
	if tooBig := payloadTooLarge(err); tooBig != nil {
		return tooBig
	}
	if errors.Is(err, events.ErrConflict) {
		return staleConflict(t)
	}
	if err != nil {
		return fmt.Errorf("publish status of %s: %w", t.ref(), err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.rm.WaitStatus(wait, seq); err != nil {
		return storedNotFolded(t, seq)
	}
	stored, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if err != nil {
		return fmt.Errorf("read back %s: %w", t.ref(), err)
	}
	return writeObject(c, t, http.StatusOK, stored.JSON)
}

// statusSince makes a status write that names the resourceVersion it was read at a
// compare-and-swap, as in Kubernetes: the object changed since is 409, and the returned ctx
// publishes the service's slice only if nobody published it since.
func (s *server) statusSince(ctx context.Context, t target, service, rv string) (context.Context, error) {
	if err := checkRV(rv, readmodel.CheckRV, readModelRVForm); err != nil {
		return ctx, err
	}
	if err := s.waitCurrent(ctx); err != nil {
		return ctx, err
	}
	o, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		return ctx, notFound(t.gr(), t.Name)
	}
	if err != nil {
		return ctx, fmt.Errorf("read %s: %w", t.ref(), err)
	}
	slice, err := events.LastStatus(ctx, s.specs.js, t.ref(), service)
	switch {
	case errors.Is(err, events.ErrNotFound):
	case err != nil:
		return ctx, fmt.Errorf("read %s's status of %s: %w", service, t.ref(), err)
	}
	if o.RV != readmodel.ObjectVersion(rv) || slice.Seq > o.StatusSeq { // the slice may be newer than the fold yet
		return ctx, staleConflict(t)
	}
	return events.FenceStatus(ctx, t.ref(), service, slice.Seq), nil
}
