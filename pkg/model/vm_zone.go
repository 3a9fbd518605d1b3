package model

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateZoneLabel is ANN-8: a zone is chosen once, from the zones the gateway knows;
// afterwards only privileged callers may move it (without the existence check).
func validateZoneLabel(r *vmReq) field.ErrorList {
	path := labelPath.Key(LabelZone)
	zone := r.New.Labels[LabelZone]
	var stored string
	if r.Old != nil {
		stored = r.Old.Labels[LabelZone]
	}
	if stored != "" {
		if zone != stored && !r.Env.Privileged {
			return field.ErrorList{field.Invalid(path, zone, "may not change once set")}
		}
		return nil
	}
	if zone != "" && !slices.Contains(r.Env.Namespace.Zones, zone) {
		return field.ErrorList{field.Invalid(path, zone, "names no known zone")}
	}
	return nil
}
