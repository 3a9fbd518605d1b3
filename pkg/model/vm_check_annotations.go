package model

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateCheckAnnotations is ANN-6: power-on and delete checks are set by external
// components, which are privileged; users may only put power-on checks on a new VM.
func validateCheckAnnotations(r *vmReq) field.ErrorList {
	if r.Env.Privileged {
		return nil
	}
	var old map[string]string
	if r.Old != nil {
		old = r.Old.Annotations
	}
	var errs field.ErrorList
	// The path is upstream's ".<key>" rendering, which clients match on (api-rules §0.2).
	for _, k := range slices.Sorted(maps.Keys(r.New.Annotations)) {
		ov, had := old[k]
		switch {
		case !isCheckAnnotation(k):
		case !had && strings.HasPrefix(k, PowerOnCheckPrefix) && r.create():
		case !had:
			errs = append(errs, field.Forbidden(annotationPath.Child(k), "adding this annotation is restricted to privileged users"))
		case ov != r.New.Annotations[k]:
			errs = append(errs, field.Forbidden(annotationPath.Child(k), "modifying this annotation is restricted to privileged users"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, kept := r.New.Annotations[k]; isCheckAnnotation(k) && !kept {
			errs = append(errs, field.Forbidden(annotationPath.Child(k), "removing this annotation is restricted to privileged users"))
		}
	}
	return errs
}

func isCheckAnnotation(k string) bool {
	return strings.HasPrefix(k, PowerOnCheckPrefix) || strings.HasPrefix(k, DeleteCheckPrefix)
}
