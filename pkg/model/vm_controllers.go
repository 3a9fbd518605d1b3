package model

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var hardwarePath = specPath.Child("hardware")

// validateControllers is CTL-1..9 (api-rules §7.7). Until the VM service has upgraded the
// object, spec.hardware does not describe the real controllers yet, so nothing is checked.
func validateControllers(r *vmReq) field.ErrorList {
	if !upgraded(r.New, r.Env) {
		return nil
	}
	hw := hardwareOf(r.New)
	var errs field.ErrorList
	if n := len(hw.IDEControllers); n != 2 {
		errs = append(errs, field.Invalid(hardwarePath.Child("ideControllers"), fmt.Sprintf("%d controllers", n), "a VM has exactly 2 IDE controllers"))
	}
	errs = append(errs, volumeSlotErrors(r.New)...)
	if !r.create() && r.Old.Spec.PowerState == PowerStateOn {
		errs = append(errs, controllerFrozenErrors(hw, hardwareOf(r.Old))...)
		if upgraded(r.Old, r.Env) {
			errs = append(errs, scsiHotAddErrors(hw, r.Old)...)
		}
	}
	return errs
}

func hardwareOf(vm *VirtualMachine) *VirtualMachineHardwareSpec {
	if vm.Spec.Hardware == nil {
		return &VirtualMachineHardwareSpec{}
	}
	return vm.Spec.Hardware
}

// volumeSlotErrors is CTL-2..7 for each volume with a complete placement, at most one
// error per volume: the controller must exist and the unit be valid and free. CD-ROMs'
// units count as taken.
func volumeSlotErrors(vm *VirtualMachine) field.ErrorList {
	ctrls := controllers(vm.Spec.Hardware)
	used := slots{}
	for _, c := range hardwareOf(vm).Cdrom {
		if id, u, set := placement(c.ControllerType, c.ControllerBusNumber, c.UnitNumber); set && u >= 0 {
			used.take(id, u)
		}
	}
	var errs field.ErrorList
	for i, v := range vm.Spec.Volumes {
		id, u, set := placement(v.ControllerType, v.ControllerBusNumber, v.UnitNumber)
		if !set {
			continue
		}
		busPath, unitPath := volumesPath.Index(i).Child("controllerBusNumber"), volumesPath.Index(i).Child("unitNumber")
		c, exists := ctrls[id]
		switch {
		case !busInRange(id.Type, id.Bus):
			errs = append(errs, field.Invalid(busPath, id.Bus, fmt.Sprintf("must be between 0 and %d for %s controllers", maxControllers(id.Type)-1, id.Type)))
		case !exists:
			errs = append(errs, field.Invalid(busPath, id.Bus, fmt.Sprintf("spec.hardware has no %s controller with this bus number", id.Type)))
		case u < 0 || u >= c.units:
			errs = append(errs, field.Invalid(unitPath, u, fmt.Sprintf("must be between 0 and %d on this %s controller", c.units-1, id.Type)))
		case c.reserved(u):
			errs = append(errs, field.Invalid(unitPath, u, "unit 7 of a SCSI controller is the controller itself"))
		case used.taken(id, u):
			errs = append(errs, field.Invalid(unitPath, u, fmt.Sprintf("unit already in use on %s controller %d", id.Type, id.Bus)))
		case used.count(id) >= c.maxDevices():
			errs = append(errs, field.Invalid(unitPath, u, fmt.Sprintf("%s controller %d already holds its maximum of %d devices", id.Type, id.Bus, c.maxDevices())))
		default:
			used.take(id, u)
		}
	}
	return errs
}

// controllerFrozenErrors is CTL-8: while the VM is desired on, an existing controller's
// sharing mode and SCSI type stay as they are.
func controllerFrozenErrors(hw, old *VirtualMachineHardwareSpec) field.ErrorList {
	const detail = "cannot change while the VM is desired powered on"
	var errs field.ErrorList
	for i, c := range hw.SCSIControllers {
		for _, o := range old.SCSIControllers {
			if o.BusNumber != c.BusNumber {
				continue
			}
			now, was := newController(ControllerTypeSCSI, c.Type, c.SharingMode), newController(ControllerTypeSCSI, o.Type, o.SharingMode)
			p := hardwarePath.Child("scsiControllers").Index(i)
			if now.sharing != was.sharing {
				errs = append(errs, field.Forbidden(p.Child("sharingMode"), detail))
			}
			if now.scsi != was.scsi {
				errs = append(errs, field.Forbidden(p.Child("type"), detail))
			}
		}
	}
	for i, c := range hw.NVMEControllers {
		for _, o := range old.NVMEControllers {
			if o.BusNumber == c.BusNumber && controllerSharing(c.SharingMode) != controllerSharing(o.SharingMode) {
				errs = append(errs, field.Forbidden(hardwarePath.Child("nvmeControllers").Index(i).Child("sharingMode"), detail))
			}
		}
	}
	return errs
}

// scsiHotAddErrors is CTL-9: a SCSI controller cannot be hot-added to a VM that is desired
// on while a volume sits on a physically shared SCSI bus, because vSphere then cannot
// fast-suspend-resume the VM to add it.
func scsiHotAddErrors(hw *VirtualMachineHardwareSpec, old *VirtualMachine) field.ErrorList {
	oldHW := hardwareOf(old)
	existed := map[int32]bool{}
	physical := map[int32]bool{}
	for _, c := range oldHW.SCSIControllers {
		existed[c.BusNumber] = true
		physical[c.BusNumber] = controllerSharing(c.SharingMode) == ControllerSharingModePhysical
	}
	carrying := false
	for _, v := range old.Spec.Volumes {
		if v.ControllerType == ControllerTypeSCSI && v.ControllerBusNumber != nil && physical[*v.ControllerBusNumber] {
			carrying = true
		}
	}
	if !carrying {
		return nil
	}
	var errs field.ErrorList
	for i, c := range hw.SCSIControllers {
		if !existed[c.BusNumber] {
			errs = append(errs, field.Forbidden(hardwarePath.Child("scsiControllers").Index(i),
				"a SCSI controller cannot be added while the VM is desired powered on and a volume sits on a physically shared SCSI controller"))
		}
	}
	return errs
}
