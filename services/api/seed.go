package api

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/model"
)

// seedUser is the identity under which the gateway ensures the seeded inventory.
var seedUser = User{Name: ServicePrefix + "api", Groups: []string{GroupServices}}

// seed creates each object that does not exist yet, through normal admission, in order
// (namespaces come first). Objects a user changed or deleted since are left alone only
// while they exist: a deleted seed object comes back on the next start.
func (s *server) seed(ctx context.Context, objs []map[string]any) error {
	if err := s.waitCaughtUp(ctx); err != nil {
		return err
	}
	for _, obj := range objs {
		t, err := seedTarget(obj)
		if err != nil {
			return err
		}
		if _, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name); err == nil {
			continue
		}
		r := &admitRequest{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace, Obj: obj, User: seedUser,
			Privileged: true, FieldValidation: "Strict"}
		seq, err := s.createObject(ctx, t, r)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", t.Kind.Kind, t.Namespace, t.Name, err)
		}
		if err := s.rm.WaitSpec(ctx, seq); err != nil {
			return err
		}
	}
	return nil
}

func seedTarget(obj map[string]any) (target, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	for _, k := range model.Kinds() {
		if k.APIVersion() == apiVersion && k.Kind == kind {
			t := target{Kind: k, Name: metaString(obj, "name")}
			if k.Namespaced {
				t.Namespace = metaString(obj, "namespace")
			}
			return t, nil
		}
	}
	return target{}, fmt.Errorf("seed object of unknown kind %s %s", apiVersion, kind)
}

// waitCaughtUp waits until the read model reflects the streams, so existing objects are
// recognised as such.
func (s *server) waitCaughtUp(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !s.rm.CaughtUp() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
