package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/cns"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/vcenter"
)

// A creation whose wait failed (vCenter out of reach for a moment) while vCenter went on
// with it is waited for by the claim's next provisioning, which then finds the volume by
// name instead of making a second one.
func TestCreateWhoseWaitFailedIsNotRepeated(t *testing.T) {
	v := &volumes{vc: vc.Client, cns: cnsClient(t)}
	name := claimVolumeName(uuid.NewString())
	createCutShort(t, v, name)

	awaitAndFindOnce(t, v, name) // the next provisioning of the claim
}

// A replica that dies while vCenter still runs its creation frees the claim's lease once
// the lease expires. Another replica, which was running before that creation was queued,
// then provisions the claim: it waits for the creation it did not issue and finds the
// volume by name instead of making a second one.
func TestAnotherReplicasUnfinishedCreateIsAwaited(t *testing.T) {
	cc := cnsClient(t)
	survivor := &volumes{vc: vc.Client, cns: cc}
	// The survivor has looked at vCenter's tasks before (a provisioning of its own): what
	// it passed over then must not hide what comes after.
	if _, err := survivor.othersCreates(t.Context()); err != nil {
		t.Fatal(err)
	}
	name := claimVolumeName(uuid.NewString())
	createCutShort(t, &volumes{vc: vc.Client, cns: cc}, name)

	awaitAndFindOnce(t, survivor, name) // the surviving replica's provisioning of the claim
}

// A creation this run did not issue that outlasts the wait fails the lookup, to be
// retried, instead of being taken as finished: its volume may yet appear.
func TestOthersCreateOutlastingTheWaitFailsTheLookup(t *testing.T) {
	cc := cnsClient(t)
	survivor := &volumes{vc: vc.Client, cns: cc, othersWait: 100 * time.Millisecond}
	dead := &volumes{vc: vc.Client, cns: cc}
	name := claimVolumeName(uuid.NewString())
	createCutShort(t, dead, name)

	if err := survivor.awaitCreatesOf(t.Context(), name); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("awaiting a creation that outlasts the wait: %v, want it to fail with the deadline", err)
	}
	// The retry, once the creation is done, finds its volume (and the task is over
	// before the test ends, which resets the tasks' delay).
	if err := dead.awaitCreatesOf(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	if _, found, err := survivor.byName(t.Context(), name); err != nil || !found {
		t.Errorf("volume %s once its creation is done: found %v (%v), want it found", name, found, err)
	}
}

// awaitAndFindOnce is a provisioning's lookup with v: it waits for the unfinished
// creations, then must find the volume name by name, the one CNS volume of that name.
func awaitAndFindOnce(t *testing.T, v *volumes, name string) {
	t.Helper()
	if err := v.awaitCreatesOf(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	if _, found, err := v.byName(t.Context(), name); err != nil || !found {
		t.Fatalf("volume %s after awaiting the creations: found %v (%v), want it found", name, found, err)
	}
	if n := len(cnsVolumes(t, name)); n != 1 {
		t.Errorf("%d CNS volumes named %s, want 1", n, name)
	}
}

// createCutShort starts the creation of the CNS volume name with v, which vCenter takes
// 1.5 s for, and stops waiting for it after 200 ms, as a replica that dies or loses
// vCenter mid-create: vCenter goes on with it.
func createCutShort(t *testing.T, v *volumes, name string) {
	t.Helper()
	delayTasks(t, "CnsCreateVolume", 1500)
	waiting, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := v.create(waiting, name, classPolicy(t, "my-storage-class"), "my-namespace", "unseen", resource.MustParse("1Gi"), nil)
	if err == nil || vcenter.IsFault(err) {
		t.Fatalf("create with a wait cut short: %v, want the wait's own failure", err)
	}
}

func cnsClient(t *testing.T) *cns.Client {
	t.Helper()
	cc, err := cns.NewClient(t.Context(), vc.Client.Client)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}
