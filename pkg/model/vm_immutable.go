package model

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const immutableDetail = "field is immutable"

// validateImmutable is the update's immutability group in api-rules §5.3 order: image
// (IMM-1, IMM-2), class (CLS-2), storage class (IMM-3), UUIDs (ID-4, ID-5), reserved
// (IMM-4), network (NET-15..18) and affinity (IMM-5).
func validateImmutable(r *vmReq) field.ErrorList {
	n, o := &r.New.Spec, &r.Old.Spec
	var errs field.ErrorList
	if n.ImageName != o.ImageName {
		errs = append(errs, field.Invalid(specPath.Child("imageName"), n.ImageName, immutableDetail))
	}
	if !equality.Semantic.DeepEqual(n.Image, o.Image) {
		errs = append(errs, field.Invalid(specPath.Child("image"), imageRefValue(n.Image), immutableDetail))
	}
	errs = append(errs, validateClassName(r)...)
	if n.StorageClass != o.StorageClass {
		errs = append(errs, field.Invalid(specPath.Child("storageClass"), n.StorageClass, immutableDetail))
	}
	errs = append(errs, uuidErrors(r)...)
	if name := resourcePolicyName(r.New); name != resourcePolicyName(r.Old) {
		errs = append(errs, field.Invalid(specPath.Child("reserved", "resourcePolicyName"), name, immutableDetail))
	}
	errs = append(errs, validateNetworkImmutable(r)...)
	if !equality.Semantic.DeepEqual(affinityOrEmpty(n.Affinity), affinityOrEmpty(o.Affinity)) {
		errs = append(errs, field.Forbidden(specPath.Child("affinity"), immutableDetail))
	}
	return errs
}

// imageRefValue renders an image ref as "<kind>/<name>" for an error message, nil when absent.
func imageRefValue(ref *ImageRef) any {
	if ref == nil {
		return nil
	}
	return ref.Kind + "/" + ref.Name
}

// affinityOrEmpty makes an absent affinity equal to an empty one: no rules either way.
func affinityOrEmpty(a *AffinitySpec) AffinitySpec {
	if a == nil {
		return AffinitySpec{}
	}
	return *a
}
