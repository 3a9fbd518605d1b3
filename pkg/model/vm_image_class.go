package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// Image kinds a VM may be deployed from.
const (
	KindVirtualMachineImage        = "VirtualMachineImage"
	KindClusterVirtualMachineImage = "ClusterVirtualMachineImage"
)

// validateImage is IMG-1..3: after D9 a new VM names its image by kind and object name.
// Whether the image exists and is ready is a condition, not an admission check.
func validateImage(r *vmReq) field.ErrorList {
	path := specPath.Child("image")
	img := r.New.Spec.Image
	switch {
	case img == nil:
		return field.ErrorList{field.Required(path, "set spec.image or a resolvable spec.imageName")}
	case img.Kind == "":
		return field.ErrorList{field.Required(path.Child("kind"), "")}
	case img.Kind != KindVirtualMachineImage && img.Kind != KindClusterVirtualMachineImage:
		return field.ErrorList{field.Invalid(path.Child("kind"), img.Kind, "must be "+KindVirtualMachineImage+" or "+KindClusterVirtualMachineImage)}
	}
	return nil
}

// validateClassName is CLS-1 on create and CLS-2 on update (where the update order runs
// it among the immutability checks): a VM always names its class.
func validateClassName(r *vmReq) field.ErrorList {
	if r.New.Spec.ClassName != "" {
		return nil
	}
	path := specPath.Child("className")
	if r.create() {
		return field.ErrorList{field.Required(path, "")}
	}
	if r.Old.Spec.ClassName != "" {
		return field.ErrorList{field.Required(path, "may not be changed to empty")}
	}
	return nil
}
