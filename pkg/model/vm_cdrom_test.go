package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestCdromRules(t *testing.T) {
	var (
		invalid, forbidden, required = field.ErrorTypeInvalid, field.ErrorTypeForbidden, field.ErrorTypeRequired
		duplicate, unsupported       = field.ErrorTypeDuplicate, field.ErrorTypeNotSupported
		cd0, cd1                     = "spec.hardware.cdrom[0]", "spec.hardware.cdrom[1]"
		unplaced                     = func(name string) VirtualMachineCdromSpec { return cdromAt(name, "", 0, 0) }
	)
	partial := func(name string, t ControllerType, bus, unit *int32) VirtualMachineCdromSpec {
		c := unplaced(name)
		c.ControllerType, c.ControllerBusNumber, c.UnitNumber = t, bus, unit
		return c
	}
	kind := func(k string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			c := unplaced("cd1")
			c.Image.Kind = k
			cdroms(true, c)(vm)
		}
	}
	// stored is a stored VM with CD-ROM cd1 on IDE 0:0, desired in the given power state,
	// upgraded or not.
	stored := func(power PowerState, up bool, extra ...func(*VirtualMachine)) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			vm.Spec.PowerState = power
			if up {
				devUpgraded(vm)
			}
			cdroms(true, cdromAt("cd1", ControllerTypeIDE, 0, 0))(vm)
			for _, e := range extra {
				e(vm)
			}
		}
	}
	off := func(vm *VirtualMachine) { vm.Spec.PowerState = PowerStateOff }
	addCdrom := func(c VirtualMachineCdromSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Hardware.Cdrom = append(vm.Spec.Hardware.Cdrom, c) }
	}
	moveTo := func(bus int32) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Hardware.Cdrom[0].ControllerBusNumber = &bus }
	}
	observed := func(env *VMEnv) { env.ObservedPower = PowerStateOn }
	checked := func(vm *VirtualMachine) { vm.Annotations[PowerOnCheckPrefix+"backup"] = "wait" }

	runDevCases(t, []devCase{
		{name: "CD-1 CD-ROM with guest ID", vm: cdroms(true, unplaced("cd1")), code: 200},
		{name: "CD-1 CD-ROM without guest ID", vm: cdroms(false, unplaced("cd1")), code: 422,
			errs: []devErr{{required, "spec.guestID"}}},
		{name: "CD-2 cluster image", vm: kind(imageKindCluster), code: 200},
		{name: "CD-2 unknown image kind", vm: kind("ContentLibraryItem"), code: 422,
			errs: []devErr{{unsupported, cd0 + ".image.kind"}}},
		{name: "CD-3 distinct images", vm: cdroms(true, unplaced("cd1"), unplaced("cd2")), code: 200},
		{name: "CD-3 same image name in both scopes", code: 422, vm: func(vm *VirtualMachine) {
			a, b := unplaced("cd1"), unplaced("cd2")
			b.Image = ImageRef{Kind: imageKindCluster, Name: a.Image.Name}
			cdroms(true, a, b)(vm)
		}, errs: []devErr{{duplicate, cd1 + ".image.name"}}},
		{name: "CD-4 type and bus together", vm: cdroms(true, partial("cd1", ControllerTypeSATA, devPtr(int32(0)), nil)), code: 200},
		{name: "CD-4 type without bus, bus without type", code: 422,
			vm:   cdroms(true, partial("cd1", ControllerTypeSATA, nil, nil), partial("cd2", "", devPtr(int32(0)), devPtr(int32(1)))),
			errs: []devErr{{required, cd0 + ".controllerBusNumber"}, {required, cd1 + ".controllerType"}}},
		{name: "CD-5 valid SATA placement on create", vm: cdroms(true, cdromAt("cd1", ControllerTypeSATA, 3, 29)), code: 200},
		{name: "CD-5 IDE bus and SATA unit out of range on create", code: 422,
			vm:   cdroms(true, cdromAt("cd1", ControllerTypeIDE, 2, 0), cdromAt("cd2", ControllerTypeSATA, 0, 30)),
			errs: []devErr{{invalid, cd0 + ".controllerBusNumber"}, {invalid, cd1 + ".unitNumber"}}},
		{name: "CD-5 controller type for disks only (stage 1 enum)", vm: cdroms(true, cdromAt("cd1", ControllerTypeSCSI, 0, 0)), code: 422,
			errs: []devErr{{unsupported, cd0 + ".controllerType"}}},
		{name: "CD-5 unit out of range on update", old: stored(PowerStateOff, true), code: 422,
			vm:   func(vm *VirtualMachine) { off(vm); vm.Spec.Hardware.Cdrom[0].UnitNumber = devPtr(int32(2)) },
			errs: []devErr{{invalid, cd0 + ".unitNumber"}}},
		{name: "CD-6 new CD-ROM placed by defaulting", old: stored(PowerStateOff, true), vm: addCdrom(unplaced("cd2")), code: 200},
		{name: "CD-6 partial placement left empty", old: stored(PowerStateOff, true), code: 422,
			vm:   addCdrom(partial("cd2", ControllerTypeIDE, nil, devPtr(int32(1)))),
			errs: []devErr{{required, cd1 + ".controllerBusNumber"}}},
		{name: "CD-6 not evaluated before the upgrade", old: stored(PowerStateOff, false), code: 200,
			vm: addCdrom(partial("cd2", ControllerTypeIDE, nil, devPtr(int32(1))))},
		{name: "CD-7 two CD-ROMs on one IDE controller", old: stored(PowerStateOff, true), code: 200,
			vm: addCdrom(cdromAt("cd2", ControllerTypeIDE, 0, 1))},
		{name: "CD-7 two CD-ROMs on one unit", old: stored(PowerStateOff, true), code: 422,
			vm:   addCdrom(cdromAt("cd2", ControllerTypeIDE, 0, 0)),
			errs: []devErr{{duplicate, cd1 + ".unitNumber"}}},
		{name: "CD-8 connection changed while on", old: stored(PowerStateOn, false), code: 200,
			vm: func(vm *VirtualMachine) { vm.Spec.Hardware.Cdrom[0].Connected = devPtr(false) }},
		{name: "CD-8 CD-ROM added while held by a power-on check", old: stored(PowerStateOn, false, checked), code: 200,
			vm: addCdrom(unplaced("cd2"))},
		{name: "CD-8 CD-ROM added while on", old: stored(PowerStateOn, false), vm: addCdrom(unplaced("cd2")), code: 422,
			errs: []devErr{{forbidden, "spec.hardware.cdrom"}}},
		{name: "CD-8 CD-ROM renamed and image changed while on", old: stored(PowerStateOn, false, addCdrom(cdromAt("cd2", "", 0, 0))), code: 422,
			vm: func(vm *VirtualMachine) {
				vm.Spec.Hardware.Cdrom[0].Name = "cd9"
				vm.Spec.Hardware.Cdrom[1].Image.Name = "vmi-other"
			},
			errs: []devErr{{forbidden, "spec.hardware.cdrom.name"}, {forbidden, cd0 + ".name"}, {forbidden, cd1 + ".image"}}},
		{name: "CD-9 CD-ROM moved while on, power not yet observed", old: stored(PowerStateOn, true), vm: moveTo(1), code: 200},
		{name: "CD-9 CD-ROM moved while on", old: stored(PowerStateOn, true), env: observed, vm: moveTo(1), code: 422,
			errs: []devErr{{forbidden, cd0 + ".controllerBusNumber"}}},
	})
}

// CD-5's controller type check stands behind the schema's enum (stage 1 refuses the same
// value first through the gateway), so it is exercised directly.
func TestCdromTypeBeyondSchema(t *testing.T) {
	vm := devVM()
	cdroms(true, cdromAt("cd1", ControllerTypeNVME, 0, 0))(vm)
	errs := validateCdrom(&vmReq{New: vm, Env: devEnv()})
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeNotSupported || errs[0].Field != "spec.hardware.cdrom[0].controllerType" {
		t.Errorf("errors = %v, want one NotSupported at spec.hardware.cdrom[0].controllerType", errs)
	}
}
