package storage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// The seed's ISO flow: a VM created empty for an ISO image gets the boot disk
// bootDiskCapacity asks for (thick, as defaultVolumeProvisioningMode says, with changed
// block tracking on), its CD-ROM placed by D19 on IDE 0:0 and backed by the ISO; the
// schema upgrade takes the disk into spec.volumes. A larger bootDiskCapacity grows the
// disk, a smaller one is refused by a condition and shrinks nothing.
func TestISOVMGetsBootDiskAndCdrom(t *testing.T) {
	js := startWithImages(t)
	iso := seedImage(t, js, "VirtualMachineImage", inventory.PhotonISO)
	v := deploytest.NewVM("my-namespace", "iso-vm", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class", GuestID: "vmwarePhoton64Guest",
		Image:    &iso,
		Hardware: &model.VirtualMachineHardwareSpec{IDEControllers: []model.IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}},
		Advanced: &model.VirtualMachineAdvancedSpec{
			BootDiskCapacity: ptr(resource.MustParse("20Gi")), DefaultVolumeProvisioningMode: model.VolumeProvisioningModeThick,
			ChangeBlockTracking: ptr(true),
		},
	})
	v.Spec.Hardware.Cdrom = []model.VirtualMachineCdromSpec{cdromEntry("cdrom1", iso, -1, true)}
	v.Put(t, js, false)
	vm := createEmpty(t, js, v)

	v.WaitStatus(t, js, model.ServiceStorage, "the upgrade done", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionUnmanagedVolumesRegistered)
		return c == "True"
	})
	v.Sync(t, js)
	cdromVerified(t, js, v, "True")
	if c := v.Spec.Hardware.Cdrom[0]; c.ControllerType != model.ControllerTypeIDE || *c.ControllerBusNumber != 0 || *c.UnitNumber != 0 {
		t.Errorf("CD-ROM placed at %s %d:%d, want IDE 0:0", c.ControllerType, *c.ControllerBusNumber, *c.UnitNumber)
	}
	if d := cdromsOf(t, vm)[slot{model.ControllerTypeIDE, 0, 0}]; d == nil || isoFile(d) != inventory.PhotonISO+".iso" {
		t.Errorf("CD-ROM at IDE 0:0 %+v, want one backed by %s.iso", d, inventory.PhotonISO)
	}
	cfg := vmConfig(t, vm)
	disk := onlyDisk(t, cfg.Config.Hardware.Device)
	b := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	if disk.CapacityInBytes != 20<<30 || b.ThinProvisioned == nil || *b.ThinProvisioned {
		t.Errorf("boot disk %d bytes, thin %v; want 20 GiB thick", disk.CapacityInBytes, b.ThinProvisioned)
	}
	if s, ok := deviceSlot(cfg.Config.Hardware.Device, disk); !ok || s != (slot{model.ControllerTypeSCSI, 0, 0}) {
		t.Errorf("boot disk at %v, want SCSI 0:0", s)
	}
	if e := cfg.Config.ChangeTrackingEnabled; e == nil || !*e {
		t.Errorf("changeTrackingEnabled %v, want true", e)
	}
	if len(v.Spec.Volumes) != 1 || v.Spec.Volumes[0].PersistentVolumeClaim == nil {
		t.Errorf("spec.volumes %+v, want the boot disk's claim", v.Spec.Volumes)
	}

	v.Spec.Advanced.BootDiskCapacity = ptr(resource.MustParse("30Gi"))
	v.Put(t, js, false)
	deviceConfigVerified(t, js, v, "True")
	if d := onlyDisk(t, vmConfig(t, vm).Config.Hardware.Device); d.CapacityInBytes != 30<<30 {
		t.Errorf("boot disk %d bytes after bootDiskCapacity 30Gi, want 30 GiB", d.CapacityInBytes)
	}

	v.Spec.Advanced.BootDiskCapacity = ptr(resource.MustParse("10Gi"))
	v.Put(t, js, false)
	st := deviceConfigVerified(t, js, v, "False")
	for _, c := range st.Conditions {
		if c.Type == model.ConditionHardwareDeviceConfigVerified && (c.Reason != model.ReasonHardwareDeviceConfigMismatch || !strings.Contains(c.Message, "never shrunk")) {
			t.Errorf("condition %s %q, want %s saying a disk is never shrunk", c.Reason, c.Message, model.ReasonHardwareDeviceConfigMismatch)
		}
	}
	if d := onlyDisk(t, vmConfig(t, vm).Config.Hardware.Device); d.CapacityInBytes != 30<<30 {
		t.Errorf("boot disk %d bytes after bootDiskCapacity 10Gi, want 30 GiB still", d.CapacityInBytes)
	}
}

// Changed block tracking turned off on a running VM waits for the VM to be off; power's
// report of the power-off brings storage back to apply it.
func TestChangeBlockTrackingWaitsForPowerOff(t *testing.T) {
	js := startWithImages(t)
	spec := vmSpec()
	spec.Advanced = &model.VirtualMachineAdvancedSpec{ChangeBlockTracking: ptr(true)}
	v := upgradedVM("my-namespace", "cbt", spec)
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	st := deviceConfigVerified(t, js, v, "True")
	if st.ChangeBlockTracking == nil || !*st.ChangeBlockTracking {
		t.Errorf("status.changeBlockTracking %v, want true", st.ChangeBlockTracking)
	}

	power := func(on bool) {
		t.Helper()
		task, err := vm.PowerOff(t.Context())
		if on {
			task, err = vm.PowerOn(t.Context())
		}
		if err == nil {
			_, err = vcenter.WaitTask(t.Context(), task)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	power(true)
	v.Spec.Advanced.ChangeBlockTracking = ptr(false)
	v.Put(t, js, false)
	st = deviceConfigVerified(t, js, v, "False")
	if e := vmConfig(t, vm).Config.ChangeTrackingEnabled; e == nil || !*e || st.ChangeBlockTracking == nil || !*st.ChangeBlockTracking {
		t.Errorf("changeTrackingEnabled %v (status %v) while on, want still true", e, st.ChangeBlockTracking)
	}

	power(false)
	reportPower(t, js, v, model.PowerStateOff)
	st = deviceConfigVerified(t, js, v, "True")
	if e := vmConfig(t, vm).Config.ChangeTrackingEnabled; e == nil || *e || st.ChangeBlockTracking == nil || *st.ChangeBlockTracking {
		t.Errorf("changeTrackingEnabled %v (status %v) once off, want false", e, st.ChangeBlockTracking)
	}
}

// reportPower publishes power's slice of the VM with the observed power state, as the
// power service does once the VM changed.
func reportPower(t testing.TB, js jetstream.JetStream, v *deploytest.VM, state model.PowerState) {
	t.Helper()
	raw, err := json.Marshal(model.VirtualMachineStatus{PowerState: state})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{Service: model.ServicePower, UID: v.UID, Generation: v.Generation(), Status: raw}); err != nil {
		t.Fatal(err)
	}
}

func onlyDisk(t testing.TB, devices object.VirtualDeviceList) *types.VirtualDisk {
	t.Helper()
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(disks) != 1 {
		t.Fatalf("%d disks, want 1", len(disks))
	}
	return disks[0].(*types.VirtualDisk)
}

// deviceConfigVerified waits for VirtualMachineHardwareDeviceConfigVerified of the
// current generation to have the status.
func deviceConfigVerified(t testing.TB, js jetstream.JetStream, v *deploytest.VM, status string) model.VirtualMachineStatus {
	t.Helper()
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "DeviceConfigVerified "+status, func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionHardwareDeviceConfigVerified)
		return c == status && s.Generation == v.Generation()
	})
	return st
}
