package api

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/admission"
	"github.com/vmop/vmop/services/api/auth"
)

// seedUser is the identity under which the gateway ensures the seeded inventory.
var seedUser = auth.User{Name: auth.ServicePrefix + "api", Groups: []string{auth.GroupServices}}

// seed creates each object that does not exist yet, through normal admission, in order
// (namespaces come first); a user's later changes are kept, a deleted seed object comes
// back on the next start. An object's status (images' facts read from vCenter) is
// published as the storage service's slice every time, since vCenter may have changed:
// the storage service owns images' status and publishes the same from their content
// library items, for these and for images created later, but an image must resolve by
// its display name (api-rules D9) from the first request on: the gateway is ready only
// once the seed is done and folded (seeded).
func (s *server) seed(ctx context.Context, objs []map[string]any) error {
	if err := s.rm.WaitCaughtUp(ctx); err != nil {
		return err
	}
	var lastStatus uint64 // the newest status published, which the read model folds before the seed is done
	for _, obj := range objs {
		t, err := seedTarget(obj)
		if err != nil {
			return err
		}
		if t.Kind.Namespaced && s.terminating(t.Namespace) {
			continue // its namespace goes with what it holds; the next start seeds both again
		}
		status := obj["status"]
		if err := s.ensure(ctx, t, obj); err != nil {
			return fmt.Errorf("%s %s/%s: %w", t.Kind.Kind, t.Namespace, t.Name, err)
		}
		if status == nil {
			continue
		}
		seq, err := s.seedStatus(ctx, t, status)
		if err != nil {
			return fmt.Errorf("status of %s %s/%s: %w", t.Kind.Kind, t.Namespace, t.Name, err)
		}
		lastStatus = max(lastStatus, seq)
	}
	if err := s.rm.WaitStatus(ctx, lastStatus); err != nil {
		return err
	}
	close(s.seeded)
	return nil
}

// ensure creates obj unless it exists, and waits until the read model has it.
func (s *server) ensure(ctx context.Context, t target, obj map[string]any) error {
	if _, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name); err == nil {
		return nil
	}
	r := &admission.Request{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace, Obj: obj, User: seedUser,
		Privileged: true, FieldValidation: "Strict"}
	seq, err := s.createObject(ctx, t, r)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.rm.WaitSpec(ctx, seq)
}

// seedStatus publishes the object's status as the storage service's slice and returns its
// sequence in STATUS.
func (s *server) seedStatus(ctx context.Context, t target, status any) (uint64, error) {
	o, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if err != nil {
		return 0, err
	}
	var cur map[string]any
	if err := json.Unmarshal(o.JSON, &cur); err != nil {
		return 0, err
	}
	body, err := json.Marshal(status)
	if err != nil {
		return 0, err
	}
	return events.PublishStatus(ctx, s.specs.js, t.ref(), events.Slice{
		Service: model.ServiceStorage, UID: o.UID, Generation: generation(cur), Status: body,
	})
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
