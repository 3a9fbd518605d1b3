package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

const pluralClaims = "persistentvolumeclaims"

// claim is what attaching needs of a PersistentVolumeClaim (CONTRACTS B): the CNS volume
// it is bound to, whether several VMs may use it, and the size it asks for.
type claim struct {
	name      string
	volumeID  string // spec.volumeName: the CNS volume ID once bound, "" before
	shared    bool   // ReadWriteMany
	requested int64  // spec.resources.requests.storage in bytes, 0 when absent
	deleting  bool   // its deletion was asked: it keeps the VMs that have it, gains none
	fromImage bool   // the image-disk registration of the VM that owns it (registrationOf)
	// owner is the VirtualMachine that controls the claim (an image disk's, instance
	// storage's; no UID for none): the claim is that VM's alone.
	owner metav1.OwnerReference
}

// errNoClaim: the claim does not exist (or is deleted from SPECS).
var errNoClaim = errors.New("claim not found")

// readClaim reads the claim from SPECS; errNoClaim when it is absent, another error when it
// cannot be read.
func (h *handler) readClaim(ctx context.Context, namespace, name string) (claim, error) {
	rec, err := events.LastSpec(ctx, h.js, events.Ref{Plural: pluralClaims, Namespace: namespace, Name: name})
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Op == events.OpDelete) {
		return claim{}, errNoClaim
	}
	if err != nil {
		return claim{}, fmt.Errorf("read claim %s/%s: %w", namespace, name, err)
	}
	var pvc model.PersistentVolumeClaim
	if err := json.Unmarshal(rec.Body, &pvc); err != nil {
		return claim{}, fmt.Errorf("%w: decode claim %s/%s: %v", events.ErrPermanent, namespace, name, err)
	}
	c := claim{
		name:     name,
		volumeID: pvc.Spec.VolumeName,
		shared:   slices.Contains(pvc.Spec.AccessModes, model.AccessModeReadWriteMany),
		deleting: pvc.DeletionTimestamp != nil,
	}
	for _, ow := range pvc.OwnerReferences {
		if kind, ok := kindOf(ow); ok && kind.Plural == "virtualmachines" && ow.Controller != nil && *ow.Controller {
			c.owner = ow
		}
	}
	_, c.fromImage = registrationOf(&pvc)
	if r := pvc.Spec.Resources; r != nil {
		if q, ok := r.Requests["storage"]; ok {
			c.requested = q.Value()
		}
	}
	return c, nil
}
