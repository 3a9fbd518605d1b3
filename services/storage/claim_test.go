package storage

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/cns"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// The seed's my-pvc (8Gi, Block, ReadWriteOnce) gets one CNS volume named after its UID,
// with its class's storage policy, recorded as spec.volumeName and reported Bound; deleted,
// the CNS volume goes, then the pvc-protection finalizer, and the claim is released.
func TestClaimBoundThenDeleted(t *testing.T) {
	js := startService(t)
	c := newPVCFixture("my-pvc", "8Gi", "my-storage-class")
	c.put(t, js)
	st := c.waitBound(t, js)
	if got := st.Capacity[model.StorageRequest]; got.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("capacity %s, want 8Gi", got.String())
	}
	if !slices.Equal(st.AccessModes, []model.PersistentVolumeAccessMode{model.AccessModeReadWriteOnce}) {
		t.Errorf("access modes %v, want [ReadWriteOnce]", st.AccessModes)
	}
	vols := cnsVolumes(t, "pvc-"+c.UID)
	if len(vols) != 1 {
		t.Fatalf("CNS volumes named pvc-%s: %d, want 1", c.UID, len(vols))
	}
	_, stored := c.stored(t, js)
	if stored.Spec.VolumeName != vols[0].VolumeId.Id {
		t.Errorf("spec.volumeName %q, want the CNS volume's ID %q", stored.Spec.VolumeName, vols[0].VolumeId.Id)
	}
	if stored.Generation != 1 || !slices.Contains(stored.Finalizers, model.FinalizerPVCProtection) {
		t.Errorf("recorded claim: generation %d finalizers %v, want 1 and the protection kept", stored.Generation, stored.Finalizers)
	}
	if got, want := vols[0].StoragePolicyId, classPolicy(t, "my-storage-class"); got != want {
		t.Errorf("CNS volume's policy %q, want the class's %q", got, want)
	}
	if got := capacityMB(vols[0]); got != 8192 {
		t.Errorf("CNS volume of %d MB, want 8192", got)
	}
	if ev := c.lastEvent(t, js, events.TypeClaimBound); ev == nil || ev.Reason != "ProvisioningSucceeded" || !strings.Contains(ev.Message, vols[0].VolumeId.Id) {
		t.Errorf("bound event %+v, want ProvisioningSucceeded naming the volume", ev)
	}

	c.markDeleting()
	c.put(t, js)
	c.waitReleased(t, js)
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes left after the claim's deletion: %d", n)
	}
	if _, stored := c.stored(t, js); len(stored.Finalizers) != 0 {
		t.Errorf("finalizers after the release: %v, want none", stored.Finalizers)
	}
}

// A claim a VM names is not given up while it does: the deletion waits and says which VM
// holds it; once the VM is gone, the volume is deleted and the claim released.
func TestClaimDeletionWaitsForItsVM(t *testing.T) {
	js := startService(t)
	c := newPVCFixture("held", "1Gi", "my-storage-class")
	c.put(t, js)
	c.waitBound(t, js)
	vm := deploytest.NewVM("my-namespace", "holder", model.VirtualMachineSpec{
		StorageClass: "my-storage-class",
		Volumes:      []model.VirtualMachineVolume{{Name: "data", PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: "held"}}},
	})
	vm.Put(t, js, false)

	c.markDeleting()
	c.put(t, js)
	slice, st := c.wait(t, js, "the InUse condition", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return slices.ContainsFunc(st.Conditions, func(cd model.PersistentVolumeClaimCondition) bool { return cd.Type == conditionInUse })
	})
	i := slices.IndexFunc(st.Conditions, func(cd model.PersistentVolumeClaimCondition) bool { return cd.Type == conditionInUse })
	if msg := st.Conditions[i].Message; !strings.Contains(msg, "VirtualMachine holder") {
		t.Errorf("InUse message %q does not name the VM", msg)
	}
	if ev := c.lastEvent(t, js, events.TypeClaimInUse); ev == nil || ev.Type != "Warning" || !strings.Contains(ev.Message, "VirtualMachine holder") {
		t.Errorf("in-use event %+v, want a Warning naming the VM", ev)
	}
	if slice.Released || len(cnsVolumes(t, "pvc-"+c.UID)) != 1 {
		t.Fatalf("a claim in use: released %v, CNS volumes %d; want kept", slice.Released, len(cnsVolumes(t, "pvc-"+c.UID)))
	}

	tombstone(t, js, vm.Ref)
	c.waitReleased(t, js)
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes left: %d", n)
	}
}

// Raising the request grows the CNS volume when the class allows expansion; a class that
// does not leaves it and says why.
func TestClaimResize(t *testing.T) {
	js := startService(t)
	putStorageClass(t, js, "fixed-size", false, "")
	grows := newPVCFixture("grows", "8Gi", "my-storage-class")
	fixed := newPVCFixture("fixed", "1Gi", "fixed-size")
	grows.put(t, js)
	fixed.put(t, js)
	grows.waitBound(t, js)
	fixed.waitBound(t, js)

	grows.setSize("12Gi")
	grows.put(t, js)
	grows.wait(t, js, "capacity 12Gi", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		got := st.Capacity[model.StorageRequest]
		return got.Cmp(resource.MustParse("12Gi")) == 0
	})
	if got := capacityMB(cnsVolumes(t, "pvc-"+grows.UID)[0]); got != 12288 {
		t.Errorf("CNS volume of %d MB after the resize, want 12288", got)
	}
	if ev := grows.lastEvent(t, js, events.TypeClaimResized); ev == nil || ev.Reason != "VolumeResizeSuccessful" || !strings.Contains(ev.Message, "from 8Gi to 12Gi") {
		t.Errorf("resized event %+v, want VolumeResizeSuccessful from 8Gi to 12Gi", ev)
	}

	fixed.setSize("2Gi")
	fixed.put(t, js)
	_, st := fixed.wait(t, js, "a resize error", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return slices.ContainsFunc(st.Conditions, func(cd model.PersistentVolumeClaimCondition) bool { return cd.Type == conditionResizeError })
	})
	if got := st.Capacity[model.StorageRequest]; st.Phase != model.ClaimBound || got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("claim of a fixed-size class: %s of %v, want Bound at 1Gi", st.Phase, st.Capacity)
	}
	if !strings.Contains(st.Conditions[0].Message, `"fixed-size" does not allow volume expansion`) {
		t.Errorf("resize error %q does not say the class forbids it", st.Conditions[0].Message)
	}
	if ev := fixed.lastEvent(t, js, events.TypeClaimResizeFailed); ev == nil || ev.Type != "Warning" {
		t.Errorf("resize failed event %+v, want a Warning", ev)
	}
	if got := capacityMB(cnsVolumes(t, "pvc-"+fixed.UID)[0]); got != 1024 {
		t.Errorf("CNS volume of %d MB, want 1024 kept", got)
	}
}

// A claim that arrives bound (a registered disk) is only checked: Bound at its volume's
// size with no volume of its own created; a volume that vanishes makes it Lost.
func TestClaimArrivingBoundIsCheckedThenLost(t *testing.T) {
	js := startService(t)
	cc, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	v := &volumes{vc: vc.Client, cns: cc, user: "test"}
	id, err := v.create(t.Context(), "registered-"+uuid.NewString(), classPolicy(t, "my-storage-class"), "my-namespace", "registered", resource.MustParse("3Gi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newPVCFixture("registered", "3Gi", "my-storage-class")
	c.spec()["volumeName"] = id
	c.put(t, js)
	st := c.waitBound(t, js)
	if got := st.Capacity[model.StorageRequest]; got.Cmp(resource.MustParse("3Gi")) != 0 {
		t.Errorf("capacity %s, want the volume's 3Gi", got.String())
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("a claim arriving bound was provisioned again: %d volumes", n)
	}
	if err := v.remove(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	c.meta()["labels"] = map[string]any{"touched": "yes"} // any change reconciles it
	c.put(t, js)
	c.wait(t, js, "phase Lost", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool { return st.Phase == model.ClaimLost })
	if ev := c.lastEvent(t, js, events.TypeClaimLost); ev == nil || ev.Type != "Warning" || !strings.Contains(ev.Message, id) {
		t.Errorf("lost event %+v, want a Warning naming the volume", ev)
	}
}

// A claim owned by a VM is deleted once the VM is gone (garbage collection), and with it
// its CNS volume.
func TestClaimOfDeletedOwnerIsCollected(t *testing.T) {
	js := startService(t)
	vm := deploytest.NewVM("my-namespace", "owner", model.VirtualMachineSpec{StorageClass: "my-storage-class"})
	vm.Put(t, js, false)
	c := newPVCFixture("disk-owned", "1Gi", "my-storage-class")
	c.ownedBy(map[string]any{"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine", "name": "owner", "uid": vm.UID})
	c.put(t, js)
	c.waitBound(t, js)
	if _, stored := c.stored(t, js); stored.DeletionTimestamp != nil {
		t.Fatal("a claim whose owner exists was deleted")
	}
	tombstone(t, js, vm.Ref)
	c.waitReleased(t, js)
	if _, stored := c.stored(t, js); stored.DeletionTimestamp == nil {
		t.Error("the released claim was never marked deleted")
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes left: %d", n)
	}
}

// A claim naming a class that does not exist stays Pending, says so and gets no volume.
func TestClaimMissingClassPending(t *testing.T) {
	js := startService(t)
	c := newPVCFixture("no-class", "1Gi", "no-such-class")
	c.put(t, js)
	_, st := c.wait(t, js, "phase Pending", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool { return st.Phase == model.ClaimPending })
	if len(st.Conditions) != 1 || !strings.Contains(st.Conditions[0].Message, `"no-such-class" not found`) {
		t.Errorf("conditions %+v, want one naming the missing class", st.Conditions)
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes: %d, want none", n)
	}
	if ev := c.lastEvent(t, js, events.TypeClaimProvisioningFailed); ev == nil || ev.Reason != "ProvisioningFailed" || !strings.Contains(ev.Message, "no-such-class") {
		t.Errorf("provisioning failed event %+v, want one naming the class", ev)
	}
	if _, stored := c.stored(t, js); stored.Spec.VolumeName != "" {
		t.Errorf("volumeName %q recorded for a claim without a volume", stored.Spec.VolumeName)
	}
}

// tombstone removes the object as the gateway does once it is released.
func tombstone(t *testing.T, js jetstream.JetStream, ref events.Ref) {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(t.Context(), js, ref, events.OpDelete, rec.Body, rec.Seq, nil); err != nil {
		t.Fatal(err)
	}
}

func classPolicy(t *testing.T, class string) string {
	t.Helper()
	for _, o := range vc.Objects {
		if o["kind"] == "StorageClass" && o["metadata"].(map[string]any)["name"] == class {
			return o["parameters"].(map[string]any)[model.StoragePolicyIDParameter].(string)
		}
	}
	t.Fatalf("no storage class %s in the inventory", class)
	return ""
}

// A claim deleted before it recorded its volume (the deletion's record won over the
// provisioning's) still has that volume, found by name, deleted.
func TestClaimDeletedBeforeRecordingItsVolume(t *testing.T) {
	js := startService(t)
	cc, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	c := newPVCFixture("early-delete", "1Gi", "my-storage-class")
	v := &volumes{vc: vc.Client, cns: cc, user: "test"}
	if _, err := v.create(t.Context(), "pvc-"+c.UID, classPolicy(t, "my-storage-class"), "my-namespace", c.Ref.Name, resource.MustParse("1Gi"), nil); err != nil {
		t.Fatal(err)
	}
	c.markDeleting()
	c.put(t, js)
	c.waitReleased(t, js)
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Errorf("CNS volumes left: %d, want the unrecorded one deleted", n)
	}
}

// A claim whose volume its class retains leaves its CNS volume behind when it goes; so does
// one whose class was deleted since its volume was made: the policy is no longer known, and
// not knowing is no reason to delete data (a Retain class deleted by an admin left its
// volumes deleted).
func TestClaimVolumeKeptWhenRetainedOrItsClassIsGone(t *testing.T) {
	js := startService(t)
	for _, tt := range []struct {
		name, class string
		classGone   bool
	}{
		{"retained", "keeps", false},
		{"class deleted", "goes-away", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			putStorageClass(t, js, tt.class, true, "Retain")
			c := newPVCFixture("kept-"+tt.class, "1Gi", tt.class)
			c.put(t, js)
			c.waitBound(t, js)
			if tt.classGone {
				tombstone(t, js, events.Ref{Plural: "storageclasses", Name: tt.class})
			}
			c.markDeleting()
			c.put(t, js)
			c.waitReleased(t, js)
			if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 1 {
				t.Errorf("CNS volumes of the claim after its deletion: %d, want 1", n)
			}
		})
	}
}

// A claim whose class binds WaitForFirstConsumer stays Pending, with no CNS volume, until a
// VM names it; then it is provisioned and Bound.
func TestClaimWaitsForFirstConsumer(t *testing.T) {
	js := startService(t)
	putLateBindingClass(t, js, "late-binding", classPolicy(t, "my-storage-class"))
	c := newPVCFixture("late", "1Gi", "late-binding")
	c.put(t, js)
	_, st := c.wait(t, js, "Pending, waiting for a consumer", func(_ events.Slice, st model.PersistentVolumeClaimStatus) bool {
		return st.Phase == model.ClaimPending && len(st.Conditions) == 1 && st.Conditions[0].Type == conditionWaitForConsumer
	})
	if st.Conditions[0].Status != "True" || !strings.Contains(st.Conditions[0].Message, "first consumer") {
		t.Errorf("conditions %+v, want WaitForFirstConsumer True", st.Conditions)
	}
	if ev := c.lastEvent(t, js, events.TypeClaimWaiting); ev == nil || ev.Type != "Normal" || ev.Reason != "WaitForFirstConsumer" {
		t.Errorf("event %+v, want Normal WaitForFirstConsumer", ev)
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 0 {
		t.Fatalf("CNS volumes before any consumer: %d, want none", n)
	}

	vm := deploytest.NewVM("my-namespace", "consumer", model.VirtualMachineSpec{
		StorageClass: "my-storage-class",
		Volumes:      []model.VirtualMachineVolume{{Name: "data", PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}},
	})
	vm.Put(t, js, false)
	if st := c.waitBound(t, js); len(st.Conditions) != 0 {
		t.Errorf("conditions once bound: %+v, want none", st.Conditions)
	}
	if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 1 {
		t.Errorf("CNS volumes once a VM names the claim: %d, want 1", n)
	}
}
