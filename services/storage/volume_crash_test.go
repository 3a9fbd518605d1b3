package storage

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	cnstypes "github.com/vmware/govmomi/cns/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// runStorage runs the service on js until the returned stop is called (or the test ends);
// stop waits for Run to return.
func runStorage(t *testing.T, js jetstream.JetStream) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()}) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// CNS recording the attachment but the VM lacking the disk (a reconcile cut short between
// the two) ends with the disk attached once: the attachment is this VM's own.
func TestAttachAfterCNSAttachedOnly(t *testing.T) {
	js := startService(t)
	pvc := boundClaim(t, js, "half-pvc", "8Gi", model.AccessModeReadWriteOnce)
	v := upgradedVM("my-namespace", "half", vmSpec())
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	volumesVerified(t, js, v, "True")

	task, err := testCNS(t).AttachVolume(t.Context(), []cnstypes.CnsVolumeAttachDetachSpec{{VolumeId: cnstypes.CnsVolumeId{Id: pvc.volumeID}, Vm: vm.Reference()}})
	if err == nil {
		_, err = vcenter.WaitTask(t.Context(), task)
	}
	if err != nil {
		t.Fatal(err)
	}
	v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("data", "half-pvc")}
	v.Put(t, js, false)
	volumesVerified(t, js, v, "True")
	if d := disksOf(t, vm)[pvc.volumeID]; len(d) != 1 {
		t.Errorf("%d disks of the volume, want 1", len(d))
	}
}
