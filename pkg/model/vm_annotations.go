package model

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// More well-known keys of VirtualMachine (api-rules §4) that admission rules read.
const (
	AnnotationRestoredVM         = "vmoperator.vmware.com/restored-vm"
	AnnotationImportedVM         = "vmoperator.vmware.com/imported-vm"
	AnnotationFailedOverVM       = "vmoperator.vmware.com/failed-over-vm"
	AnnotationMgmtProxyAllowlist = "mgmt.proxy.vmware.com/allowlist"
	AnnotationMgmtProxyWatermark = "mgmt.proxy.vmware.com/watermark"
	AnnotationClusterModuleGroup = "vsphere-cluster-module-group"
	LabelCAPVClusterRole         = "capv.vmware.com/cluster.role"
	LabelCAPWClusterRole         = "capw.vmware.com/cluster.role"
)

var (
	annotationPath = field.NewPath("metadata", "annotations")
	labelPath      = field.NewPath("metadata", "labels")
)

// privilegedAnnotations may be written only by privileged callers (ANN-1).
var privilegedAnnotations = []string{
	AnnotationCloudInitInstanceID, AnnotationInstanceID, AnnotationFirstBootDone,
	AnnotationRestoredVM, AnnotationImportedVM, AnnotationFailedOverVM,
	AnnotationMgmtProxyAllowlist, AnnotationMgmtProxyWatermark,
}

// validateAnnotations is ANN-1..4 and ANN-9 (and ANN-7 on create, which the update order
// runs in the upgrade guard): the keys only services and privileged tooling write.
func validateAnnotations(r *vmReq) field.ErrorList {
	var errs field.ErrorList
	if !r.Env.Privileged {
		for _, k := range privilegedAnnotations { // ANN-1
			if annotationDiffers(r, k) {
				errs = append(errs, field.Forbidden(annotationPath.Key(k), "only privileged users may set or change this annotation"))
			}
		}
		if !r.create() {
			for _, k := range []string{AnnotationCreatedAtBuild, AnnotationCreatedAtSchema} { // ANN-2
				if annotationDiffers(r, k) {
					errs = append(errs, field.Forbidden(annotationPath.Key(k), "may not be changed or removed"))
				}
			}
			if annotationDiffers(r, AnnotationClusterModuleGroup) { // ANN-3
				errs = append(errs, field.Forbidden(annotationPath.Key(AnnotationClusterModuleGroup), "only privileged users may change this annotation"))
			}
		}
	}
	if r.New.Annotations[AnnotationClusterModuleGroup] != "" && resourcePolicyName(r.New) == "" { // ANN-4
		errs = append(errs, field.Forbidden(annotationPath.Key(AnnotationClusterModuleGroup), "requires spec.reserved.resourcePolicyName"))
	}
	if !r.Env.Privileged {
		for _, k := range []string{AnnotationSkipValidation, AnnotationSkipDeletePlatform} { // ANN-9
			if annotationDiffers(r, k) {
				errs = append(errs, field.Forbidden(annotationPath.Key(k), "only privileged users may add, change or remove this annotation"))
			}
		}
	}
	if r.create() {
		errs = append(errs, upgradeAnnotationErrors(r)...) // ANN-7
	}
	return errs
}

// annotationDiffers tells whether annotation k was added, changed or removed; on create
// the stored object counts as having none.
func annotationDiffers(r *vmReq, k string) bool {
	v, ok := r.New.Annotations[k]
	if r.Old == nil {
		return ok
	}
	ov, had := r.Old.Annotations[k]
	return ok != had || v != ov
}

func resourcePolicyName(vm *VirtualMachine) string {
	if vm.Spec.Reserved == nil {
		return ""
	}
	return vm.Spec.Reserved.ResourcePolicyName
}

// validatePausedLabel is ANN-5: the paused label records who paused the VM, so only
// privileged callers (and the VM service) write it.
func validatePausedLabel(r *vmReq) field.ErrorList {
	if r.Env.Privileged {
		return nil
	}
	v, ok := r.New.Labels[LabelPaused]
	var ov string
	var had bool
	if r.Old != nil {
		ov, had = r.Old.Labels[LabelPaused]
	}
	if ok == had && v == ov {
		return nil
	}
	// The path is upstream's ".<key>" rendering, which clients match on (api-rules §0.2).
	return field.ErrorList{field.Forbidden(labelPath.Child(LabelPaused), "only privileged users may add, change or remove the paused label")}
}
