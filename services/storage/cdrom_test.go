package storage

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// A CD-ROM entry becomes a CD-ROM at its slot backed by its image's ISO file on the
// library's datastore; connected: false, a swap of the image and the entry's removal
// change the device, and the status lists it with its file and state.
func TestCdromLifecycle(t *testing.T) {
	js := startWithImages(t)
	photon := seedImage(t, js, "VirtualMachineImage", inventory.PhotonISO)
	ubuntu := seedImage(t, js, "ClusterVirtualMachineImage", inventory.UbuntuISO)
	v := photonCdromVM("iso-cdrom", cdromEntry("cdrom1", photon, 0, true))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)

	st := cdromVerified(t, js, v, "True")
	at := slot{model.ControllerTypeIDE, 0, 0}
	cdroms := cdromsOf(t, vm)
	if len(cdroms) != 1 || cdroms[at] == nil {
		t.Fatalf("CD-ROMs %v, want one at %s", cdroms, at)
	}
	d := cdroms[at]
	b := d.Backing.(*types.VirtualCdromIsoBackingInfo)
	if isoFile(d) != inventory.PhotonISO+".iso" || !strings.HasPrefix(b.FileName, "[") || !strings.Contains(b.FileName, "contentlib-") {
		t.Errorf("backing %q, want the library's %s.iso on its datastore", b.FileName, inventory.PhotonISO)
	}
	if c := d.Connectable; c == nil || !c.StartConnected || !c.AllowGuestControl {
		t.Errorf("connectable %+v, want start connected and guest control", c)
	}
	dev := cdromInStatus(t, st, at)
	if dev.Name != "cdrom1" || dev.FileName != b.FileName || dev.StartConnected == nil || !*dev.StartConnected {
		t.Errorf("status %+v, want cdrom1 with %s, start connected", dev, b.FileName)
	}
	key := d.Key

	v.Spec.Hardware.Cdrom[0].Connected = ptr(false)
	v.Put(t, js, false)
	cdromVerified(t, js, v, "True")
	if d := cdromsOf(t, vm)[at]; d == nil || d.Key != key || d.Connectable.StartConnected {
		t.Errorf("after connected: false: %+v, want the same CD-ROM disconnected", d)
	}

	v.Spec.Hardware.Cdrom[0].Image = ubuntu
	v.Put(t, js, false)
	cdromVerified(t, js, v, "True")
	if d := cdromsOf(t, vm)[at]; d == nil || isoFile(d) != inventory.UbuntuISO+".iso" {
		t.Errorf("after the swap: %+v, want %s.iso", d, inventory.UbuntuISO)
	}

	v.Spec.Hardware.Cdrom = nil
	v.Put(t, js, false)
	cdromVerified(t, js, v, "True")
	if cdroms := cdromsOf(t, vm); len(cdroms) != 0 {
		t.Errorf("CD-ROMs %v after the entry's removal, want none", cdroms)
	}
}

// A CD-ROM naming an OVF image, beside a good one, is a condition naming the entry,
// neither CD-ROM is added, and the VM is not ready to power on.
func TestCdromOfOVFImageChangesNothing(t *testing.T) {
	js := startWithImages(t)
	v := photonCdromVM("ovf-cdrom",
		cdromEntry("good", seedImage(t, js, "VirtualMachineImage", inventory.PhotonISO), 0, true),
		cdromEntry("ovf", seedImage(t, js, "VirtualMachineImage", inventory.PhotonImage), 1, true))
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := cdromVerified(t, js, v, "False")
	for _, c := range st.Conditions {
		if c.Type == model.ConditionHardwareCDROMVerified && (c.Reason != model.ReasonHardwareCDROMMismatch || !strings.Contains(c.Message, "CD-ROM ovf") || !strings.Contains(c.Message, `"OVF"`)) {
			t.Errorf("condition %s %q, want %s naming CD-ROM ovf and its type", c.Reason, c.Message, model.ReasonHardwareCDROMMismatch)
		}
	}
	if cdroms := cdromsOf(t, vm); len(cdroms) != 0 {
		t.Errorf("CD-ROMs %v, want none while an entry is bad", cdroms)
	}
	// Power waits for VirtualMachineStorageReady: the VM does not boot without its CD-ROMs.
	if c, reason := deploytest.Condition(st, model.ConditionStorageReady); c != "False" || reason != model.ReasonHardwareCDROMMismatch {
		t.Errorf("StorageReady %s %s, want False %s", c, reason, model.ReasonHardwareCDROMMismatch)
	}
}

func cdromInStatus(t testing.TB, st model.VirtualMachineStatus, at slot) model.VirtualDeviceStatus {
	t.Helper()
	if st.Hardware != nil {
		for _, c := range st.Hardware.Controllers {
			if c.Type != at.typ || c.BusNumber != at.bus {
				continue
			}
			for _, d := range c.Devices {
				if d.UnitNumber == at.unit && d.Type == model.DeviceTypeCDROM {
					return d
				}
			}
		}
	}
	t.Fatalf("no CD-ROM at %s in status.hardware %+v", at, st.Hardware)
	return model.VirtualDeviceStatus{}
}

// CD-ROMs another reconfigure added between storage's read of the VM and its own change
// (a reconcile of a replica that was stopping) are no mismatch: vCenter refuses storage's
// change, the unit being taken, and storage finds what it wanted already there.
func TestCdromAddedMeanwhileIsVerified(t *testing.T) {
	js := startWithImages(t)
	photon := seedImage(t, js, "VirtualMachineImage", inventory.PhotonISO)
	v := photonCdromVM("iso-cdrom-meanwhile", cdromEntry("cdrom1", photon, 0, true))
	v.Put(t, js, false)

	var adds atomic.Int32 // reconfigures adding a CD-ROM: storage's, then the other
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		req, ok := m.Body.(*types.ReconfigVM_Task)
		if !ok || !addsCdrom(req.Spec) || adds.Add(1) > 1 {
			return nil, nil
		}
		// The same change lands first, through another session, as another replica's.
		other := object.NewVirtualMachine(vc.Client.Client, m.This)
		task, err := other.Reconfigure(t.Context(), req.Spec)
		if err == nil {
			_, err = vcenter.WaitTask(t.Context(), task)
		}
		if err != nil {
			t.Errorf("the other reconfigure: %v", err)
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)

	cdromVerified(t, js, v, "True")
	if cdroms := cdromsOf(t, vm); len(cdroms) != 1 || cdroms[slot{model.ControllerTypeIDE, 0, 0}] == nil {
		t.Errorf("CD-ROMs %v, want one at IDE 0:0", cdroms)
	}
	if adds.Load() < 2 {
		t.Error("storage's CD-ROM change never met the other one")
	}
}

// addsCdrom reports whether a reconfigure adds a CD-ROM.
func addsCdrom(spec types.VirtualMachineConfigSpec) bool {
	for _, c := range spec.DeviceChange {
		s := c.GetVirtualDeviceConfigSpec()
		if _, ok := s.Device.(*types.VirtualCdrom); ok && s.Operation == types.VirtualDeviceConfigSpecOperationAdd {
			return true
		}
	}
	return false
}
