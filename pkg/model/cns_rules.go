package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// ValidateCnsRegisterVolume refuses a CnsRegisterVolume created by anyone but the VM
// service: only the registration of a VM's image disks processes them, so one created by
// hand would never be acted on. Updates and deletes are the kind's privileged callers'.
func ValidateCnsRegisterVolume(old *CnsRegisterVolume, service bool) field.ErrorList {
	if old != nil || service {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata"),
		"CnsRegisterVolumes are created by the VM service when it registers a VM's image disks as claims")}
}
