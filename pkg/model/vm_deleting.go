package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// vmDeletingRules hold even for updates of a VM being deleted, which otherwise skip
// stage 3 (api-rules §5.2): they guard what the deletion itself obeys, so an ordinary
// user cannot release a VM that a delete check holds by removing the check, nor keep
// its vSphere VM by adding skip-delete-platform-resource, once deletion started.
var vmDeletingRules = []vmRule{
	validateCheckAnnotations, // ANN-6
	validateDeletionBypasses, // ANN-9, the part deletion reads
}

// ValidateDeletingVirtualMachine is stage 3 for an update of a VM whose stored object
// has a deletionTimestamp: only vmDeletingRules apply.
func ValidateDeletingVirtualMachine(vm, old *VirtualMachine, env VMEnv) field.ErrorList {
	r := &vmReq{New: vm, Old: old, Env: env}
	var errs field.ErrorList
	for _, rule := range vmDeletingRules {
		errs = append(errs, rule(r)...)
	}
	return errs
}

func validateDeletionBypasses(r *vmReq) field.ErrorList {
	if r.Env.Privileged || !annotationDiffers(r, AnnotationSkipDeletePlatform) {
		return nil
	}
	return field.ErrorList{field.Forbidden(annotationPath.Key(AnnotationSkipDeletePlatform),
		"only privileged users may add, change or remove this annotation")}
}
