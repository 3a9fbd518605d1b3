package model

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateStorageClass is CRY-0 and CRY-1: a VM is created on a storage class that exists,
// names an SPBM profile and is associated with the VM's namespace.
func validateStorageClass(r *vmReq) field.ErrorList {
	path := specPath.Child("storageClass")
	name := r.New.Spec.StorageClass
	if name == "" {
		if r.create() {
			return field.ErrorList{field.Required(path, "a storage class is required to create a VM")}
		}
		return nil
	}
	sc, found, err := r.Env.Lookup.StorageClass(name)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("look up storage class %s: %w", name, err))}
	}
	switch {
	case !found:
		return field.ErrorList{field.Invalid(path, name, "no such storage class")}
	case sc.Parameters[StoragePolicyIDParameter] == "":
		return field.ErrorList{field.Invalid(path, name, "the storage class has no "+StoragePolicyIDParameter+" parameter")}
	case r.Env.Namespace.StorageClasses != nil && !slices.Contains(r.Env.Namespace.StorageClasses, name):
		return field.ErrorList{field.Invalid(path, name, "the storage class is not associated with namespace "+r.New.Namespace)}
	}
	return nil
}
