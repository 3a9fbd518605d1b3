package model

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationTrySoftTimeout overrides, for one VM, how long a TrySoft power-off, suspend
// or restart waits for the guest before acting hard (a Go duration, e.g. "30s"); the
// stack-wide default is VMOP_TRYSOFT_TIMEOUT, five minutes unless set.
const AnnotationTrySoftTimeout = "power.vmop.dev/trysoft-timeout"

// MaxTrySoftTimeout bounds the annotation: a guest that needs longer is better served by
// powerOffMode Soft.
const MaxTrySoftTimeout = time.Hour

// ParseTrySoftTimeout reads an AnnotationTrySoftTimeout value: a positive Go duration of
// at most MaxTrySoftTimeout.
func ParseTrySoftTimeout(v string) (time.Duration, string) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, `must be a duration such as "30s" or "2m"`
	case d <= 0:
		return 0, "must be positive"
	case d > MaxTrySoftTimeout:
		return 0, "must be at most " + MaxTrySoftTimeout.String()
	}
	return d, ""
}

// validateTrySoftTimeout rejects an AnnotationTrySoftTimeout the power service could
// not use.
func validateTrySoftTimeout(r *vmReq) field.ErrorList {
	v, ok := r.New.Annotations[AnnotationTrySoftTimeout]
	if !ok {
		return nil
	}
	if _, why := ParseTrySoftTimeout(v); why != "" {
		return field.ErrorList{field.Invalid(annotationPath.Key(AnnotationTrySoftTimeout), v, why)}
	}
	return nil
}
