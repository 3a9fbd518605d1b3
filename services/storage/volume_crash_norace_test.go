// The race detector stays off for this test (make test runs it without): it attaches
// disks to ten VMs at once, and vcsim's reconfigure reads a datastore's fields without the
// lock another reconfigure writes them under (simulator/datastore.go:74 against
// virtual_machine.go:1786), a race inside vcsim that no vmop code is part of.

//go:build !race

package storage

import (
	"fmt"
	"testing"

	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Storage stopped while it attaches the claims of ten VMs, and started again, ends with
// each volume's disk attached once, to its own VM.
func TestAttachExactlyOnceAcrossRestart(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, "storageclasses"); err != nil {
		t.Fatal(err)
	}
	const n = 10
	vms := make([]*deploytest.VM, n)
	vcVMs := make([]*object.VirtualMachine, n)
	claims := make([]*testClaim, n)
	for i := range n {
		claims[i] = boundClaim(t, js, fmt.Sprintf("crash-%d", i), "8Gi", model.AccessModeReadWriteOnce)
		vms[i] = upgradedVM("my-namespace", fmt.Sprintf("crash-%d", i), vmSpec(claimVolume("data", claims[i].ref.Name)))
		vms[i].Put(t, js, false)
		vcVMs[i] = vms[i].Deploy(t, vc, js, inventory.PhotonImage)
	}

	stop := runStorage(t, js)
	waitFor(t, "a first disk attached", func() bool {
		for i, vm := range vcVMs {
			if len(disksOf(t, vm)[claims[i].volumeID]) > 0 {
				return true
			}
		}
		return false
	})
	stop() // in the middle of the attaches: some done, some under way, some not begun
	attachedBefore := 0
	for i, vm := range vcVMs {
		attachedBefore += len(disksOf(t, vm)[claims[i].volumeID])
	}
	t.Logf("%d of %d disks attached when storage stopped", attachedBefore, n)

	runStorage(t, js)
	for i, v := range vms {
		volumesVerified(t, js, v, "True")
		disks := disksOf(t, vcVMs[i])
		if len(disks) != 1 || len(disks[claims[i].volumeID]) != 1 {
			t.Errorf("VM %s has CNS disks %v, want exactly one of volume %s", v.Ref.Name, disks, claims[i].volumeID)
		}
	}
}
