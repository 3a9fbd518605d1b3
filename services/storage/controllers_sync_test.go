package storage

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Once the VM is upgraded, spec.hardware's controllers are applied after create (CTL-1..9):
// added ones appear in vcsim and status.hardware.controllers; an empty one that is dropped
// goes, an empty one retyped is replaced; the one holding the image disk keeps its type
// when the spec asks for another, and StorageReady says why; a new sharing mode is an
// edit of the controller.
func TestControllersChangeAfterCreate(t *testing.T) {
	js := startService(t)
	pv0 := model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}
	v := upgradedVM("my-namespace", "controllers", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class", Hardware: hardware(pv0),
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.MyImage)
	v.WaitStatus(t, js, model.ServiceStorage, "StorageReady True", storageReady(1))

	// Add a SATA controller and an LsiLogic SCSI controller on bus 1.
	v.Sync(t, js)
	v.Spec.Hardware.SATAControllers = []model.SATAControllerSpec{{BusNumber: 0}}
	v.Spec.Hardware.SCSIControllers = append(v.Spec.Hardware.SCSIControllers,
		model.SCSIControllerSpec{BusNumber: 1, Type: model.SCSIControllerTypeLsiLogic})
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "the added controllers", storageReady(v.Generation()))
	if got, want := controllerIDs(st), []string{"IDE 0", "IDE 1", "SATA 0", "SCSI 0", "SCSI 1"}; !slices.Equal(got, want) {
		t.Errorf("status.hardware.controllers %v, want %v", got, want)
	}
	devices := object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)
	if n := len(devices.SelectByType((*types.VirtualAHCIController)(nil))); n != 1 {
		t.Errorf("%d AHCI controllers in vcsim, want 1", n)
	}
	if lsi := devices.SelectByType((*types.VirtualLsiLogicController)(nil)); len(lsi) != 1 || lsi[0].(*types.VirtualLsiLogicController).BusNumber != 1 {
		t.Errorf("LsiLogic controllers in vcsim %v, want one on bus 1", lsi)
	}

	// Drop SATA 0, retype the empty SCSI 1 to ParaVirtual with physical sharing, and ask
	// SCSI 0, which holds the image disk, to become LsiLogic.
	v.Sync(t, js)
	v.Spec.Hardware.SATAControllers = nil
	v.Spec.Hardware.SCSIControllers = []model.SCSIControllerSpec{
		{BusNumber: 0, Type: model.SCSIControllerTypeLsiLogic},
		{BusNumber: 1, Type: model.SCSIControllerTypeParaVirtual, SharingMode: model.ControllerSharingModePhysical},
	}
	v.Put(t, js, false)
	gen := v.Generation()
	_, st = v.WaitStatus(t, js, model.ServiceStorage, "the refused retype", func(s events.Slice, st model.VirtualMachineStatus) bool {
		_, r := deploytest.Condition(st, model.ConditionStorageReady)
		return s.Generation == gen && r == model.ReasonHardwareControllersMismatch
	})
	msg := conditionMessage(st, model.ConditionStorageReady)
	if !strings.Contains(msg, "SCSI controller 0") || !strings.Contains(msg, "a disk at unit 0") {
		t.Errorf("StorageReady message %q does not name SCSI controller 0 and its disk", msg)
	}
	if got, want := controllerIDs(st), []string{"IDE 0", "IDE 1", "SCSI 0", "SCSI 1"}; !slices.Equal(got, want) {
		t.Errorf("status.hardware.controllers %v, want %v", got, want)
	}
	devices = object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)
	if n := len(devices.SelectByType((*types.VirtualAHCIController)(nil))); n != 0 {
		t.Errorf("%d AHCI controllers in vcsim after the removal, want 0", n)
	}
	if n := len(devices.SelectByType((*types.VirtualLsiLogicController)(nil))); n != 0 {
		t.Errorf("%d LsiLogic controllers in vcsim, want none (bus 1 retyped, bus 0 kept)", n)
	}
	pv := devices.SelectByType((*types.ParaVirtualSCSIController)(nil))
	if len(pv) != 2 {
		t.Fatalf("ParaVirtual controllers in vcsim %v, want 2", pv)
	}
	for _, d := range pv {
		c := d.(*types.ParaVirtualSCSIController)
		want := types.VirtualSCSISharingNoSharing
		if c.BusNumber == 1 {
			want = types.VirtualSCSISharingPhysicalSharing
		}
		if c.SharedBus != want {
			t.Errorf("SCSI %d sharing %q, want %q", c.BusNumber, c.SharedBus, want)
		}
	}
	if n := len(devices.SelectByType((*types.VirtualDisk)(nil))); n != 1 {
		t.Errorf("%d disks in vcsim, want the image disk kept", n)
	}

	// Only the sharing mode of SCSI 1 changes: the controller is edited in place.
	bus1 := func(devices object.VirtualDeviceList) *types.ParaVirtualSCSIController {
		for _, d := range devices.SelectByType((*types.ParaVirtualSCSIController)(nil)) {
			if c := d.(*types.ParaVirtualSCSIController); c.BusNumber == 1 {
				return c
			}
		}
		t.Fatal("no ParaVirtual SCSI 1 in vcsim")
		return nil
	}
	key := bus1(devices).Key
	v.Sync(t, js)
	v.Spec.Hardware.SCSIControllers = []model.SCSIControllerSpec{
		pv0, {BusNumber: 1, Type: model.SCSIControllerTypeParaVirtual, SharingMode: model.ControllerSharingModeVirtual},
	}
	v.Put(t, js, false)
	v.WaitStatus(t, js, model.ServiceStorage, "the resharing", storageReady(v.Generation()))
	if c := bus1(object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device)); c.SharedBus != types.VirtualSCSISharingVirtualSharing || c.Key != key {
		t.Errorf("SCSI 1: sharing %q, key %d; want virtualSharing on the same controller (key %d)", c.SharedBus, c.Key, key)
	}
}

func storageReady(gen int64) func(events.Slice, model.VirtualMachineStatus) bool {
	return func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionStorageReady)
		return s.Generation == gen && c == "True"
	}
}

func conditionMessage(st model.VirtualMachineStatus, typ string) string {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

// controllerIDs lists status.hardware.controllers as "TYPE bus", sorted.
func controllerIDs(st model.VirtualMachineStatus) []string {
	if st.Hardware == nil {
		return nil
	}
	var out []string
	for _, c := range st.Hardware.Controllers {
		out = append(out, fmt.Sprintf("%s %d", c.Type, c.BusNumber))
	}
	slices.Sort(out)
	return out
}

// Removing a controller waits for the VM to be off: StorageReady says so while it runs,
// and power's slice reporting it off brings the removal without waiting for the resync.
func TestControllerRemovalWaitsForPowerOff(t *testing.T) {
	js := startService(t)
	pv0 := model.SCSIControllerSpec{BusNumber: 0, Type: model.SCSIControllerTypeParaVirtual}
	v := upgradedVM("my-namespace", "controllers-on", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		Hardware: &model.VirtualMachineHardwareSpec{
			IDEControllers:  []model.IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}},
			SCSIControllers: []model.SCSIControllerSpec{pv0}, SATAControllers: []model.SATAControllerSpec{{BusNumber: 0}},
		},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.MyImage)
	v.WaitStatus(t, js, model.ServiceStorage, "StorageReady True", storageReady(1))
	if task, err := vm.PowerOn(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("power on: %v", err)
	}

	v.Sync(t, js)
	v.Spec.Hardware.SATAControllers = nil
	v.Put(t, js, false)
	gen := v.Generation()
	_, st := v.WaitStatus(t, js, model.ServiceStorage, "the removal waiting", func(s events.Slice, st model.VirtualMachineStatus) bool {
		_, r := deploytest.Condition(st, model.ConditionStorageReady)
		return s.Generation == gen && r == model.ReasonHardwareControllersMismatch
	})
	if msg := conditionMessage(st, model.ConditionStorageReady); !strings.Contains(msg, "SATA controller 0 is not in spec.hardware: applied once the VM is powered off") {
		t.Errorf("StorageReady message %q, want the removal waiting for power-off", msg)
	}
	if n := len(object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device).SelectByType((*types.VirtualAHCIController)(nil))); n != 1 {
		t.Errorf("%d AHCI controllers while the VM runs, want 1 (kept)", n)
	}

	if task, err := vm.PowerOff(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("power off: %v", err)
	}
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{Service: model.ServicePower, UID: v.UID, Generation: gen,
		Status: []byte(`{"powerState":"PoweredOff"}`)}); err != nil {
		t.Fatal(err)
	}
	v.WaitStatus(t, js, model.ServiceStorage, "the removal done", storageReady(gen))
	if n := len(object.VirtualDeviceList(readTestVM(t, vm).Config.Hardware.Device).SelectByType((*types.VirtualAHCIController)(nil))); n != 0 {
		t.Errorf("%d AHCI controllers after the power-off, want 0", n)
	}
}
