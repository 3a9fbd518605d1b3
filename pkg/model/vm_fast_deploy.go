package model

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationFastDeploy chooses how a VM is cloned from an image of type VM, as VM
// Operator's annotation of the same name chooses its fast-deploy mode: "linked" makes a
// linked clone (child disks on the template's snapshot, promoted later by the storage
// service as spec.promoteDisksMode says), "direct" full copies of the template's disks.
// Without it a VM image is cloned linked, VM Operator's default mode. Images of type OVF
// are always deployed by the content library, which copies their disks (as "direct").
const AnnotationFastDeploy = "vmoperator.vmware.com/fast-deploy"

// The values of AnnotationFastDeploy (case does not matter).
const (
	FastDeployModeDirect = "direct"
	FastDeployModeLinked = "linked"
)

// LinkedClone tells whether a VM cloned from an image of type VM is to be a linked clone.
func LinkedClone(vm *VirtualMachine) bool {
	return !strings.EqualFold(vm.Annotations[AnnotationFastDeploy], FastDeployModeDirect)
}

// validateFastDeploy refuses a fast-deploy mode other than direct and linked, which would
// otherwise be read as the default.
func validateFastDeploy(r *vmReq) field.ErrorList {
	v, ok := r.New.Annotations[AnnotationFastDeploy]
	if !ok || strings.EqualFold(v, FastDeployModeDirect) || strings.EqualFold(v, FastDeployModeLinked) {
		return nil
	}
	return field.ErrorList{field.NotSupported(annotationPath.Key(AnnotationFastDeploy), v, []string{FastDeployModeDirect, FastDeployModeLinked})}
}
