package model

import "k8s.io/apimachinery/pkg/util/validation/field"

const mebibyte = 1 << 20

// validateBootDiskCapacity is HW-4: vSphere sizes disks in whole MiB.
func validateBootDiskCapacity(r *vmReq) field.ErrorList {
	a := r.New.Spec.Advanced
	if a == nil || a.BootDiskCapacity == nil {
		return nil
	}
	if bytes := a.BootDiskCapacity.Value(); bytes%mebibyte != 0 {
		return field.ErrorList{field.Invalid(specPath.Child("advanced", "bootDiskCapacity"), bytes, "must be a whole number of MiB")}
	}
	return nil
}
