package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// validateBiosUUIDFormat is ID-3: the BIOS UUID is a UUID. Stage 1 checks the same format
// first; this guards objects that reach stage 3 another way.
func validateBiosUUIDFormat(r *vmReq) field.ErrorList {
	if id := r.New.Spec.BiosUUID; id != "" && !uuidRE.MatchString(id) {
		return field.ErrorList{field.Invalid(specPath.Child("biosUUID"), id, "must be a UUID")}
	}
	return nil
}

// uuidErrors is ID-4 and ID-5: once a UUID is set it is the VM's identity.
func uuidErrors(r *vmReq) field.ErrorList {
	var errs field.ErrorList
	for _, u := range []struct{ name, new, old string }{
		{"biosUUID", r.New.Spec.BiosUUID, r.Old.Spec.BiosUUID},
		{"instanceUUID", r.New.Spec.InstanceUUID, r.Old.Spec.InstanceUUID},
	} {
		if u.old != "" && u.new != u.old {
			errs = append(errs, field.Invalid(specPath.Child(u.name), u.new, "is immutable once set"))
		}
	}
	return errs
}
