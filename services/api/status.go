package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api/auth"
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
