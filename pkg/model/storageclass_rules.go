package model

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateStorageClass is Kubernetes' rule for a StorageClass update: its provisioner,
// parameters, reclaim policy and volume binding mode are fixed once it exists. Volumes
// were made, and are kept or deleted, by what it said then.
func ValidateStorageClass(sc, old *StorageClass) field.ErrorList {
	if old == nil {
		return nil
	}
	var errs field.ErrorList
	forbid := func(name string, changed bool) {
		if changed {
			errs = append(errs, field.Forbidden(field.NewPath(name), "updates to "+name+" are forbidden"))
		}
	}
	forbid("provisioner", sc.Provisioner != old.Provisioner)
	forbid("parameters", !maps.Equal(sc.Parameters, old.Parameters))
	forbid("reclaimPolicy", sc.ReclaimPolicy != old.ReclaimPolicy)
	forbid("volumeBindingMode", sc.VolumeBindingMode != old.VolumeBindingMode)
	return errs
}
