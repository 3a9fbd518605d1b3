package model

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FinalizerPVCProtection holds a claim back while a VM uses it, as Kubernetes' pvc-protection
// does: the storage service removes it once no VM uses the claim and its volume is deleted.
const FinalizerPVCProtection = "kubernetes.io/pvc-protection"

// The volume modes of a claim.
const (
	VolumeModeFilesystem = "Filesystem"
	VolumeModeBlock      = "Block"
)

// StorageRequest is the resource name of a claim's requested size.
const StorageRequest = "storage"

// ClaimEnv is what claim rules know besides the objects.
type ClaimEnv struct {
	Privileged bool
	Namespace  NamespaceSettings
	// StorageClass returns the named StorageClass, found false when absent.
	StorageClass func(name string) (sc *StorageClass, found bool, err error)
}

// DefaultPersistentVolumeClaim is stage 2 for claims, as Kubernetes does on create: the
// volume mode defaults to Filesystem and the pvc-protection finalizer is added.
func DefaultPersistentVolumeClaim(c, old *PersistentVolumeClaim) *field.Error {
	if old != nil {
		return nil
	}
	if c.Spec.VolumeMode == "" {
		c.Spec.VolumeMode = VolumeModeFilesystem
	}
	if !slices.Contains(c.Finalizers, FinalizerPVCProtection) {
		c.Finalizers = append(c.Finalizers, FinalizerPVCProtection)
	}
	return nil
}

var claimSpecPath = field.NewPath("spec")

// ValidatePersistentVolumeClaim is stage 3 for claims. The volume is a CNS block volume:
// ReadWriteOnce, or ReadWriteMany for a Block claim (a disk VMs share as MultiWriter; vSphere
// shares no file system between VMs). Only the requested size may change after create, and
// only grow, when the class allows expansion. Only privileged callers name the volume (the
// registration of a disk that exists); the storage service records it otherwise.
func ValidatePersistentVolumeClaim(c, old *PersistentVolumeClaim, env ClaimEnv) field.ErrorList {
	errs := claimRequestErrors(c)
	errs = append(errs, claimModeErrors(c)...)
	errs = append(errs, claimDataSourceErrors(c)...)
	if old == nil {
		errs = append(errs, claimClassErrors(c, env)...)
		if c.Spec.VolumeName != "" && !env.Privileged {
			errs = append(errs, field.Forbidden(claimSpecPath.Child("volumeName"),
				"only the storage service binds a claim to its volume; a claim requests a new one"))
		}
		return errs
	}
	return append(errs, claimUpdateErrors(c, old, env)...)
}

// ClaimRequest is the requested size of a claim, zero when absent.
func ClaimRequest(c *PersistentVolumeClaim) resource.Quantity {
	if c.Spec.Resources == nil {
		return resource.Quantity{}
	}
	return c.Spec.Resources.Requests[StorageRequest]
}

func claimRequestErrors(c *PersistentVolumeClaim) field.ErrorList {
	path := claimSpecPath.Child("resources", "requests").Key(StorageRequest)
	if c.Spec.Resources == nil {
		return field.ErrorList{field.Required(path, "a claim requests a size")}
	}
	q, ok := c.Spec.Resources.Requests[StorageRequest]
	switch {
	case !ok:
		return field.ErrorList{field.Required(path, "a claim requests a size")}
	case q.Sign() <= 0:
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than zero")}
	}
	return nil
}

func claimModeErrors(c *PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	modePath := claimSpecPath.Child("volumeMode")
	if m := c.Spec.VolumeMode; m != "" && m != VolumeModeFilesystem && m != VolumeModeBlock {
		errs = append(errs, field.NotSupported(modePath, m, []string{VolumeModeFilesystem, VolumeModeBlock}))
	}
	path := claimSpecPath.Child("accessModes")
	if len(c.Spec.AccessModes) == 0 {
		return append(errs, field.Required(path, "at least one access mode is required"))
	}
	for i, m := range c.Spec.AccessModes {
		switch m {
		case AccessModeReadWriteOnce:
		case AccessModeReadWriteMany:
			if c.Spec.VolumeMode != VolumeModeBlock {
				errs = append(errs, field.Invalid(path.Index(i), m,
					"ReadWriteMany needs volumeMode Block: VMs share a volume as a MultiWriter disk, never a file system"))
			}
		default:
			errs = append(errs, field.NotSupported(path.Index(i), m,
				[]string{string(AccessModeReadWriteOnce), string(AccessModeReadWriteMany)}))
		}
	}
	return errs
}

// claimDataSourceErrors: a volume is provisioned empty, so the one data source is the VM
// whose existing disk a registered claim (spec.volumeName set) binds in place.
func claimDataSourceErrors(c *PersistentVolumeClaim) field.ErrorList {
	ref := c.Spec.DataSourceRef
	if ref == nil {
		return nil
	}
	path := claimSpecPath.Child("dataSourceRef")
	var errs field.ErrorList
	group := ""
	if ref.APIGroup != nil {
		group = *ref.APIGroup
	}
	if group != GroupVMOperator || ref.Kind != "VirtualMachine" {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, []string{"VirtualMachine (apiGroup " + GroupVMOperator + ")"}))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	if ref.Namespace != nil && *ref.Namespace != "" && *ref.Namespace != c.Namespace {
		errs = append(errs, field.Invalid(path.Child("namespace"), *ref.Namespace, "must be the claim's namespace"))
	}
	if c.Spec.VolumeName == "" {
		errs = append(errs, field.Invalid(path, ref.Name,
			"a new volume is provisioned empty: a data source only names the VM whose disk a registered claim (spec.volumeName) binds"))
	}
	return errs
}

func claimClassErrors(c *PersistentVolumeClaim, env ClaimEnv) field.ErrorList {
	path := claimSpecPath.Child("storageClassName")
	if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName == "" {
		return field.ErrorList{field.Required(path, "a claim names the storage class (vSphere storage policy) its volume is provisioned with")}
	}
	name := *c.Spec.StorageClassName
	sc, found, err := env.StorageClass(name)
	switch {
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("look up storage class %s: %w", name, err))}
	case !found:
		return field.ErrorList{field.NotFound(path, name)}
	case sc.Parameters[StoragePolicyIDParameter] == "":
		return field.ErrorList{field.Invalid(path, name, "the storage class has no "+StoragePolicyIDParameter+" parameter")}
	case env.Namespace.StorageClasses != nil && !slices.Contains(env.Namespace.StorageClasses, name):
		return field.ErrorList{field.Invalid(path, name, "the storage class is not associated with namespace "+c.Namespace)}
	}
	return nil
}

// claimUpdateErrors: as Kubernetes, the spec is immutable but for the requested size, which
// may only grow, and only when the class allows expansion. A claim the storage service bound
// keeps its volume.
func claimUpdateErrors(c, old *PersistentVolumeClaim, env ClaimEnv) field.ErrorList {
	var errs field.ErrorList
	immutable := func(name string, now, was any, same bool) {
		if !same {
			errs = append(errs, field.Invalid(claimSpecPath.Child(name), now, "field is immutable"))
		}
	}
	immutable("accessModes", c.Spec.AccessModes, old.Spec.AccessModes, slices.Equal(c.Spec.AccessModes, old.Spec.AccessModes))
	immutable("storageClassName", deref(c.Spec.StorageClassName), deref(old.Spec.StorageClassName),
		deref(c.Spec.StorageClassName) == deref(old.Spec.StorageClassName))
	immutable("volumeMode", c.Spec.VolumeMode, old.Spec.VolumeMode, c.Spec.VolumeMode == old.Spec.VolumeMode)
	immutable("dataSourceRef", c.Spec.DataSourceRef, old.Spec.DataSourceRef, sameDataSource(c.Spec.DataSourceRef, old.Spec.DataSourceRef))
	switch {
	case c.Spec.VolumeName == old.Spec.VolumeName:
	case old.Spec.VolumeName == "" && env.Privileged:
	default:
		errs = append(errs, field.Invalid(claimSpecPath.Child("volumeName"), c.Spec.VolumeName, "field is immutable"))
	}
	was, now := ClaimRequest(old), ClaimRequest(c)
	path := claimSpecPath.Child("resources", "requests").Key(StorageRequest)
	switch cmp := now.Cmp(was); {
	case now.IsZero() || was.IsZero():
		// claimRequestErrors says so
	case cmp < 0:
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("field can not be less than previous value (%s): a volume does not shrink", was.String())))
	case cmp > 0:
		errs = append(errs, claimExpansionErrors(old, env, path)...)
	}
	return errs
}

func claimExpansionErrors(old *PersistentVolumeClaim, env ClaimEnv, path *field.Path) field.ErrorList {
	name := deref(old.Spec.StorageClassName)
	sc, found, err := env.StorageClass(name)
	switch {
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("look up storage class %s: %w", name, err))}
	case !found:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the claim's storage class %q no longer exists, so it cannot say the volume may grow", name))}
	case sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("storage class %q does not allow volume expansion (allowVolumeExpansion is not true)", name))}
	}
	return nil
}

func sameDataSource(a, b *TypedObjectReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return deref(a.APIGroup) == deref(b.APIGroup) && a.Kind == b.Kind && a.Name == b.Name && deref(a.Namespace) == deref(b.Namespace)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
