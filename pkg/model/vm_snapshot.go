package model

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSnapshot is SNAP-1..4: a revert is requested on an existing VM, one at a time,
// and never for a Kubernetes node (cluster API manages those).
func validateSnapshot(r *vmReq) field.ErrorList {
	path := specPath.Child("currentSnapshotName")
	name := r.New.Spec.CurrentSnapshotName
	if r.create() {
		if name != "" {
			return field.ErrorList{field.Forbidden(path, "may not be set on create")}
		}
		return nil
	}
	var errs field.ErrorList
	if name != "" && strings.TrimSpace(name) == "" {
		errs = append(errs, field.Invalid(path, name, "must not be only whitespace"))
	}
	if old := r.Old.Spec.CurrentSnapshotName; old != "" && name != old {
		errs = append(errs, field.Forbidden(path, "a revert to "+old+" is still pending"))
	}
	if name != "" {
		for _, l := range []string{LabelCAPVClusterRole, LabelCAPWClusterRole} {
			if _, ok := r.New.Labels[l]; ok {
				errs = append(errs, field.Forbidden(path, "a VM labelled "+l+" may not be reverted"))
				break
			}
		}
	}
	return errs
}
