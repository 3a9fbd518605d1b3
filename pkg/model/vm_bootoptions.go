package model

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var bootOptionsPath = specPath.Child("bootOptions")

// validateBootOptions is BOOT-1..8 and BOOT-10 (BOOT-9, the bootRetry enum, is stage 1).
func validateBootOptions(r *vmReq) field.ErrorList {
	bo := r.New.Spec.BootOptions
	var errs field.ErrorList
	if bo != nil {
		if r.create() {
			if len(bo.BootOrder) > 0 {
				errs = append(errs, field.Forbidden(bootOptionsPath.Child("bootOrder"), "may only be set on an existing VM"))
			}
		} else {
			errs = append(errs, bootOrderErrors(r)...)
		}
		if bo.BootRetryDelay != nil && bo.BootRetry != BootOptionEnabled {
			errs = append(errs, field.Required(bootOptionsPath.Child("bootRetry"), "must be Enabled when bootRetryDelay is set"))
		}
		if bo.EFISecureBoot == BootOptionEnabled && bo.Firmware != FirmwareEFI {
			errs = append(errs, field.Forbidden(bootOptionsPath.Child("efiSecureBoot"), "requires firmware efi"))
		}
	}
	if onGate(r) && !equality.Semantic.DeepEqual(bo, r.Old.Spec.BootOptions) {
		errs = append(errs, field.Forbidden(bootOptionsPath, "may not change while the VM is desired PoweredOn"))
	}
	return errs
}

// bootOrderErrors is BOOT-2..6: every entry names, once, a device the VM has. Disks are
// the ones the stored object's status reports (the request's status is not the caller's).
func bootOrderErrors(r *vmReq) field.ErrorList {
	s := r.New.Spec
	seen := map[string]bool{}
	var errs field.ErrorList
	for i, d := range s.BootOptions.BootOrder {
		p := bootOptionsPath.Child("bootOrder").Index(i)
		if d.Name == "" && d.Type != BootDeviceCDRom {
			errs = append(errs, field.Required(p.Child("name"), "a "+d.Type+" entry must name its device"))
			continue
		}
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(p, d.Name))
			continue
		}
		seen[d.Name] = true
		switch d.Type {
		case BootDeviceNetwork:
			if s.Network == nil || !slices.ContainsFunc(s.Network.Interfaces, func(ifc VirtualMachineNetworkInterfaceSpec) bool { return ifc.Name == d.Name }) {
				errs = append(errs, field.Invalid(p, d.Name, "names no interface of spec.network.interfaces"))
			}
		case BootDeviceDisk:
			if !slices.ContainsFunc(r.Old.Status.Volumes, func(v VirtualMachineVolumeStatus) bool { return v.Name == d.Name }) {
				errs = append(errs, field.Invalid(p, d.Name, "names no volume of status.volumes"))
			}
		case BootDeviceCDRom:
			if s.Hardware == nil || len(s.Hardware.Cdrom) == 0 {
				errs = append(errs, field.Invalid(p, d.Name, "the VM has no CD-ROM"))
			}
		}
	}
	return errs
}
