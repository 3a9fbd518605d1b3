package model

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// brokenLookup is an inventory whose class or image reads fail.
type brokenLookup struct {
	Lookup
	classErr, imageErr error
}

func (b brokenLookup) Class(ns, name string) (*VirtualMachineClass, bool, error) {
	if b.classErr != nil {
		return nil, false, b.classErr
	}
	return b.Lookup.Class(ns, name)
}

func (b brokenLookup) Image(ns string, ref ImageRef) (*VirtualMachineImageStatus, bool, error) {
	if b.imageErr != nil {
		return nil, false, b.imageErr
	}
	return b.Lookup.Image(ns, ref)
}

func TestControllerRules(t *testing.T) {
	var (
		invalid, forbidden = field.ErrorTypeInvalid, field.ErrorTypeForbidden
		vol0, vol1         = "spec.volumes[0]", "spec.volumes[1]"
		scsi0              = SCSIControllerSpec{BusNumber: 0, SharingMode: ControllerSharingModeNone, Type: SCSIControllerTypeParaVirtual}
	)
	// upgradedCreate is a create by an upgrade-exempt caller of an already upgraded VM:
	// the controller rules run; placement (D18) only fills what is missing.
	upgradedCreate := func(change func(vm *VirtualMachine)) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			vm.Annotations = map[string]string{}
			devUpgraded(vm)
			change(vm)
		}
	}
	onVolumes := func(scsi []SCSIControllerSpec, vs ...VirtualMachineVolume) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			devHardware(vm).SCSIControllers = scsi
			vm.Spec.Volumes = vs
		}
	}
	vol := func(name string, t ControllerType, bus, unit int32) VirtualMachineVolume {
		return devPlaced(devVolume(name, ""), t, bus, unit)
	}
	// storedOn is an upgraded stored VM, desired in the given power state, with SCSI
	// controller 0 and an NVMe controller 0.
	stored := func(power PowerState, scsi ...SCSIControllerSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			devUpgraded(vm)
			vm.Spec.PowerState = power
			devHardware(vm).SCSIControllers = scsi
			devHardware(vm).NVMEControllers = []NVMEControllerSpec{{BusNumber: 0, SharingMode: ControllerSharingModeNone}}
		}
	}
	off := func(vm *VirtualMachine) { vm.Spec.PowerState = PowerStateOff }
	reshare := func(vm *VirtualMachine) {
		hw := vm.Spec.Hardware
		hw.SCSIControllers[0].SharingMode, hw.SCSIControllers[0].Type = ControllerSharingModeVirtual, SCSIControllerTypeLsiLogic
		hw.NVMEControllers[0].SharingMode = ControllerSharingModePhysical
	}
	physical0 := SCSIControllerSpec{BusNumber: 0, SharingMode: ControllerSharingModePhysical, Type: SCSIControllerTypeParaVirtual}
	shared := func(vm *VirtualMachine) {
		stored(PowerStateOn, physical0)(vm)
		w := devPlaced(devVolume("wsfc", "claim-missing"), ControllerTypeSCSI, 0, 0)
		w.ApplicationType, w.DiskMode = VolumeApplicationTypeMicrosoftWSFC, VolumeDiskModeIndependentPersistent
		vm.Spec.Volumes = []VirtualMachineVolume{w}
	}
	addSCSI1 := func(vm *VirtualMachine) {
		vm.Spec.Hardware.SCSIControllers = append(vm.Spec.Hardware.SCSIControllers, SCSIControllerSpec{BusNumber: 1})
	}

	runDevCases(t, []devCase{
		{name: "CTL-1 two IDE controllers", old: stored(PowerStateOn), vm: func(vm *VirtualMachine) { vm.Labels = map[string]string{"a": "b"} }, code: 200},
		{name: "CTL-1 one IDE controller", old: stored(PowerStateOn), code: 422,
			vm:   func(vm *VirtualMachine) { vm.Spec.Hardware.IDEControllers = vm.Spec.Hardware.IDEControllers[:1] },
			errs: []devErr{{invalid, "spec.hardware.ideControllers"}}},
		{name: "CTL-1 not evaluated before the upgrade", code: 200,
			vm: func(vm *VirtualMachine) { devHardware(vm).IDEControllers = []IDEControllerSpec{{BusNumber: 1}} }},
		{name: "CTL-2 bus in range", env: privileged, code: 200,
			vm: upgradedCreate(onVolumes([]SCSIControllerSpec{scsi0}, vol("a", ControllerTypeSCSI, 0, 0)))},
		{name: "CTL-2 bus out of range", env: privileged, code: 422,
			vm:   upgradedCreate(onVolumes(nil, vol("a", ControllerTypeSCSI, 4, 0))),
			errs: []devErr{{invalid, vol0 + ".controllerBusNumber"}}},
		{name: "CTL-3 controller present", env: privileged, code: 200,
			vm: upgradedCreate(onVolumes([]SCSIControllerSpec{scsi0, {BusNumber: 1}}, vol("a", ControllerTypeSCSI, 1, 0)))},
		{name: "CTL-4 last unit of a ParaVirtual controller", env: privileged, code: 200,
			vm: upgradedCreate(onVolumes([]SCSIControllerSpec{scsi0}, vol("a", ControllerTypeSCSI, 0, 64)))},
		{name: "CTL-4 unit beyond a BusLogic controller", env: privileged, code: 422,
			vm: upgradedCreate(onVolumes([]SCSIControllerSpec{{BusNumber: 0, Type: SCSIControllerTypeBusLogic}},
				vol("a", ControllerTypeSCSI, 0, 16))),
			errs: []devErr{{invalid, vol0 + ".unitNumber"}}},
		{name: "CTL-5 unit 7 of an NVMe controller", env: privileged, code: 200, vm: upgradedCreate(func(vm *VirtualMachine) {
			devHardware(vm).NVMEControllers = []NVMEControllerSpec{{BusNumber: 0}}
			vm.Spec.Volumes = []VirtualMachineVolume{vol("a", ControllerTypeNVME, 0, 7)}
		})},
		{name: "CTL-5 unit 7 of a SCSI controller", env: privileged, code: 422,
			vm:   upgradedCreate(onVolumes([]SCSIControllerSpec{scsi0}, vol("a", ControllerTypeSCSI, 0, 7))),
			errs: []devErr{{invalid, vol0 + ".unitNumber"}}},
		{name: "CTL-6 distinct units", env: privileged, code: 200, vm: upgradedCreate(onVolumes([]SCSIControllerSpec{scsi0},
			vol("a", ControllerTypeSCSI, 0, 0), vol("b", ControllerTypeSCSI, 0, 1)))},
		{name: "CTL-6 unit of an earlier volume and of a CD-ROM", env: privileged, code: 422, vm: upgradedCreate(func(vm *VirtualMachine) {
			onVolumes([]SCSIControllerSpec{scsi0}, vol("a", ControllerTypeIDE, 0, 0), vol("b", ControllerTypeSCSI, 0, 1), vol("c", ControllerTypeSCSI, 0, 1))(vm)
			cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0))(vm)
		}), errs: []devErr{{invalid, vol0 + ".unitNumber"}, {invalid, "spec.volumes[2].unitNumber"}}},
		{name: "CTL-7 controller with room", env: privileged, code: 200, vm: upgradedCreate(func(vm *VirtualMachine) {
			vm.Spec.Volumes = []VirtualMachineVolume{vol("a", ControllerTypeIDE, 0, 1)}
			cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0))(vm)
		})},
		{name: "CTL-7 controller already full", env: privileged, code: 422, vm: upgradedCreate(func(vm *VirtualMachine) {
			vm.Spec.Volumes = []VirtualMachineVolume{vol("a", ControllerTypeIDE, 0, 1)}
			cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0), cdromAt("cd2", ControllerTypeIDE, 0, 5))(vm)
		}), errs: []devErr{{invalid, "spec.hardware.cdrom[1].unitNumber"}, {invalid, vol0 + ".unitNumber"}}},
		{name: "CTL-8 sharing and type changed while desired off", old: stored(PowerStateOff, scsi0),
			vm: func(vm *VirtualMachine) { off(vm); reshare(vm) }, code: 200},
		{name: "CTL-8 sharing and type changed while desired on", old: stored(PowerStateOn, scsi0), vm: reshare, code: 422,
			errs: []devErr{{forbidden, "spec.hardware.scsiControllers[0].sharingMode"}, {forbidden, "spec.hardware.scsiControllers[0].type"},
				{forbidden, "spec.hardware.nvmeControllers[0].sharingMode"}}},
		{name: "CTL-9 SCSI controller added while no volume is on a shared bus", old: stored(PowerStateOn, physical0), vm: addSCSI1, code: 200},
		{name: "CTL-9 SCSI controller added while a volume is on a shared bus", old: shared, vm: addSCSI1, code: 422,
			errs: []devErr{{forbidden, "spec.hardware.scsiControllers[1]"}}},
		{name: "CTL-6 checks volumes after placement defaulting", old: stored(PowerStateOn, scsi0), code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Volumes = []VirtualMachineVolume{vol("a", ControllerTypeSCSI, 0, 0), vol("b", ControllerTypeSCSI, 0, 0)}
			},
			errs: []devErr{{invalid, vol1 + ".unitNumber"}}},
	})
}

func TestClassMergeRule(t *testing.T) {
	invalid := field.ErrorTypeInvalid
	configSpec := func(devices ...map[string]any) json.RawMessage {
		var changes []any
		for _, d := range devices {
			changes = append(changes, map[string]any{"_typeName": "VirtualDeviceConfigSpec", "operation": "add", "device": d})
		}
		raw, err := json.Marshal(map[string]any{"_typeName": "VirtualMachineConfigSpec", "deviceChange": changes})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	pvscsi0 := map[string]any{"_typeName": "ParaVirtualSCSIController", "key": -100, "busNumber": 0, "sharedBus": "noSharing"}
	nic := map[string]any{"_typeName": "VirtualVmxnet3", "key": -200}
	inventory := func(cs json.RawMessage, disks ...VirtualMachineImageDiskInfo) func(*VMEnv) {
		return func(env *VMEnv) {
			l := devLookup()
			l.classes[devNS+"/small"].Spec.ConfigSpec = cs
			l.images[devNS+"/VirtualMachineImage/vmi-0a0044d7c690bcbea"].Disks = disks
			env.Lookup = l
		}
	}
	broken := func(classErr, imageErr error) func(*VMEnv) {
		return func(env *VMEnv) {
			env.Lookup = brokenLookup{Lookup: devLookup(), classErr: classErr, imageErr: imageErr}
		}
	}
	scsi := func(s SCSIControllerSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { devHardware(vm).SCSIControllers = []SCSIControllerSpec{s} }
	}
	disk := func(bus int32) VirtualMachineImageDiskInfo {
		return VirtualMachineImageDiskInfo{Name: "disk-0", ControllerType: ControllerTypeSCSI, ControllerBusNumber: &bus, UnitNumber: devPtr(int32(0))}
	}
	runDevCases(t, []devCase{
		{name: "CTL-10 class, image and spec.hardware agree", env: inventory(configSpec(pvscsi0, nic), disk(0)),
			vm: scsi(SCSIControllerSpec{BusNumber: 0}), code: 200},
		{name: "CTL-10 class and spec.hardware define a controller differently", env: inventory(configSpec(pvscsi0)),
			vm: scsi(SCSIControllerSpec{BusNumber: 0, Type: SCSIControllerTypeLsiLogic}), code: 422,
			errs: []devErr{{invalid, "spec.hardware"}}},
		{name: "CTL-10 image disk on a bus a VM does not have", env: inventory(nil, disk(4)), code: 422,
			errs: []devErr{{invalid, "spec.hardware"}}},
		{name: "CTL-10 class that does not exist is no admission error", code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.ClassName = "large" }},
		{name: "CTL-10 class lookup failed", env: broken(errors.New("store unavailable"), nil), code: 422,
			errs: []devErr{{invalid, "spec.className"}}},
		{name: "CTL-10 image lookup failed", env: broken(nil, errors.New("store unavailable")), code: 422,
			errs: []devErr{{invalid, "spec.image"}}},
	})
}

// CTL-3 guards stage 3 only: D18 creates every missing controller within range, so
// through the whole chain a volume never names an absent bus.
func TestCTL3ControllerMissingAtStage3(t *testing.T) {
	vm := devVM()
	devHardware(vm).SCSIControllers = []SCSIControllerSpec{{BusNumber: 0}}
	devHardware(vm).IDEControllers = []IDEControllerSpec{{BusNumber: 0}, {BusNumber: 1}}
	bus, unit := int32(1), int32(0)
	vm.Spec.Volumes = []VirtualMachineVolume{{Name: "a", ControllerType: ControllerTypeSCSI, ControllerBusNumber: &bus, UnitNumber: &unit}}
	markUpgraded(vm)
	errs := validateControllers(&vmReq{New: vm, Env: devEnv()})
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeInvalid || errs[0].Field != "spec.volumes[0].controllerBusNumber" {
		t.Errorf("errors = %v, want one Invalid at spec.volumes[0].controllerBusNumber", errs)
	}
}
