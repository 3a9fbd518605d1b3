package model

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var nextRestartTimePath = specPath.Child("nextRestartTime")

// validateNextRestartTime is PWR-4 on create and PWR-5, PWR-6, PWR-10 on update. D15 has
// already turned "now" into a time; these catch what bypassed it.
func validateNextRestartTime(r *vmReq) field.ErrorList {
	t := r.New.Spec.NextRestartTime
	if r.create() {
		if t != "" {
			return field.ErrorList{field.Invalid(nextRestartTimePath, t, "may not be set on create")}
		}
		return nil
	}
	if t == r.Old.Spec.NextRestartTime {
		return nil
	}
	var errs field.ErrorList
	if strings.EqualFold(t, "now") {
		errs = append(errs, field.Invalid(nextRestartTimePath, t, `"now" must be converted to a time by defaulting`))
	} else if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
		errs = append(errs, field.Invalid(nextRestartTimePath, t, "must be an RFC 3339 time"))
	}
	if o := r.Env.ObservedPower; o == PowerStateOff || o == PowerStateSuspended {
		errs = append(errs, field.Invalid(nextRestartTimePath, t, "only a VM observed PoweredOn can be restarted, this one is "+string(o)))
	}
	return errs
}

// validateApplyPowerTime is PWR-9: the group service's schedule is an RFC 3339 instant.
func validateApplyPowerTime(r *vmReq) field.ErrorList {
	v, ok := r.New.Annotations[AnnotationApplyPowerStateTime]
	if !ok {
		return nil
	}
	if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
		return field.ErrorList{field.Invalid(annotationPath.Key(AnnotationApplyPowerStateTime), v, "must be an RFC 3339 time")}
	}
	return nil
}
