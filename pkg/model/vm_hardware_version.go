package model

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxHardwareVersion is the highest virtual hardware version the gateway's vSphere library
// knows (HW-1).
const maxHardwareVersion = 22

// validateHardwareVersion is HW-1 on create and HW-1..3 on update: a known version, only
// ever raised, and only while the VM is to be powered off.
func validateHardwareVersion(r *vmReq) field.ErrorList {
	path := specPath.Child("minHardwareVersion")
	v := r.New.Spec.MinHardwareVersion
	var errs field.ErrorList
	if v > maxHardwareVersion {
		errs = append(errs, field.Invalid(path, v, fmt.Sprintf("must be at most %d", maxHardwareVersion)))
	}
	if r.create() {
		return errs
	}
	switch old := r.Old.Spec.MinHardwareVersion; {
	case v < old:
		errs = append(errs, field.Invalid(path, v, fmt.Sprintf("may not be lowered from %d", old)))
	case v > old && r.Old.Spec.PowerState != PowerStateOff && r.New.Spec.PowerState != PowerStateOff:
		errs = append(errs, field.Invalid(path, v, "may only be raised while the VM is desired PoweredOff"))
	}
	return errs
}
