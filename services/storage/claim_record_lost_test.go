package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// The claim loop makes a claim's volume while a VM's image-disk registration takes the
// claim over, recording a volume of its own: the claim loop's record loses the
// compare-and-swap, and the volume it made, which nothing will ever record, is deleted
// instead of being left in CNS. The registration's volume stays.
func TestVolumeWhoseRecordLostIsDeleted(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, "storageclasses"); err != nil {
		t.Fatal(err)
	}
	cc := cnsClient(t)
	c := &claims{js: js, uses: newVMClaims(js), volumes: &volumes{vc: vc.Client, cns: cc}, now: time.Now}
	pvc := newPVCFixture("taken-over", "1Gi", "my-storage-class")
	pvc.put(t, js)
	rec, claim := pvc.stored(t, js)
	o := reconcile.Object{Ref: pvc.Ref, Spec: rec, Meta: reconcile.Meta{UID: pvc.UID, Generation: 1}}
	var class model.StorageClass
	if found, err := reconcile.LastSpecOf(t.Context(), js, events.Ref{Plural: "storageclasses", Name: "my-storage-class"}, &class); err != nil || !found {
		t.Fatalf("storage class: found %v (%v)", found, err)
	}

	// The registration's write, after the claim loop read the claim.
	registered, err := c.volumes.create(t.Context(), "disk-"+uuid.NewString(), classPolicy(t, "my-storage-class"), "my-namespace", "taken-over", resource.MustParse("1Gi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pvc.spec()["volumeName"] = registered
	pvc.put(t, js)

	if _, err := c.provision(t.Context(), o, &claim, &class, claimReport{now: time.Now()}); !errors.Is(err, events.ErrConflict) {
		t.Fatalf("provision over the registration's record: %v, want a conflict", err)
	}
	if n := len(cnsVolumes(t, claimVolumeName(pvc.UID))); n != 0 {
		t.Errorf("%d CNS volumes named %s left, want the unrecorded one deleted", n, claimVolumeName(pvc.UID))
	}
	if _, found, err := c.volumes.byID(t.Context(), registered); err != nil || !found {
		t.Errorf("the registration's volume %s: found %v (%v), want it kept", registered, found, err)
	}
	if _, stored := pvc.stored(t, js); stored.Spec.VolumeName != registered {
		t.Errorf("the claim records volume %q, want the registration's %s", stored.Spec.VolumeName, registered)
	}
}
