package storage

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Storage stopped while it makes the CD-ROM changes of ten VMs (two CD-ROMs added to
// each; then one removed and the other swapped to the first's image), and started again
// each time, leaves each VM with exactly the CD-ROMs its spec names, each once.
func TestCdromChangesExactlyOnceAcrossRestart(t *testing.T) {
	js := startWithImages(t)
	photon := seedImage(t, js, "VirtualMachineImage", inventory.PhotonISO)
	ubuntu := seedImage(t, js, "ClusterVirtualMachineImage", inventory.UbuntuISO)
	const n = 10
	vms := make([]*deploytest.VM, n)
	vcVMs := make([]*object.VirtualMachine, n)
	for i := range n {
		vms[i] = photonCdromVM(fmt.Sprintf("cdrom-crash-%d", i), cdromEntry("one", photon, 0, true), cdromEntry("two", ubuntu, 1, false))
		vms[i].Put(t, js, false)
	}
	ide0 := func(unit int32) slot { return slot{model.ControllerTypeIDE, 0, unit} }
	changed := func(want int) int {
		done := 0
		for _, vm := range vcVMs {
			if vm != nil && len(cdromsOf(t, vm)) == want {
				done++
			}
		}
		return done
	}

	stop := runStorage(t, js)
	for i, v := range vms {
		vcVMs[i] = v.Deploy(t, vc, js, inventory.PhotonImage)
		if i == n/2 { // the first half reported created: their CD-ROMs are under way
			waitFor(t, "a first VM's CD-ROMs added", func() bool { return changed(2) > 0 })
			stop()
			t.Logf("%d of %d VMs had their CD-ROMs when storage stopped", changed(2), n)
		}
	}
	stop = runStorage(t, js)
	for i, v := range vms {
		cdromVerified(t, js, v, "True")
		got := cdromsOf(t, vcVMs[i])
		if len(got) != 2 || got[ide0(0)] == nil || isoFile(got[ide0(0)]) != inventory.PhotonISO+".iso" || got[ide0(1)] == nil || isoFile(got[ide0(1)]) != inventory.UbuntuISO+".iso" {
			t.Errorf("VM %s has CD-ROMs %v, want %s at IDE 0:0 and %s at IDE 0:1", v.Ref.Name, got, inventory.PhotonISO, inventory.UbuntuISO)
		}
	}

	stop()
	for _, v := range vms {
		v.Spec.Hardware.Cdrom = []model.VirtualMachineCdromSpec{cdromEntry("two", photon, 1, true)}
		v.Put(t, js, false)
	}
	stop = runStorage(t, js)
	waitFor(t, "a first VM's CD-ROMs changed", func() bool {
		return slices.ContainsFunc(vcVMs, func(vm *object.VirtualMachine) bool { return len(cdromsOf(t, vm)) == 1 })
	})
	stop()
	t.Logf("%d of %d VMs had their second change when storage stopped", changed(1), n)
	runStorage(t, js)
	for i, v := range vms {
		cdromVerified(t, js, v, "True")
		got := cdromsOf(t, vcVMs[i])
		if d := got[ide0(1)]; len(got) != 1 || d == nil || isoFile(d) != inventory.PhotonISO+".iso" || !d.Connectable.StartConnected {
			t.Errorf("VM %s has CD-ROMs %v, want only %s at IDE 0:1, connected", v.Ref.Name, got, inventory.PhotonISO)
		}
	}
}
