package model

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// activeFeatureBits are the upgrade feature bits of our baseline (api-rules §0.4): Base 1,
// VMSharedDisks 2, AllDisksArePVCs 4.
const activeFeatureBits = 1 | 2 | 4

var upgradedToKeys = []string{AnnotationUpgradedToBuild, AnnotationUpgradedToSchema, AnnotationUpgradedToFeature}

// BuildVersion is vmop's build: the gateway stamps it as created-at (D2) and compares the
// upgraded-to annotation with it, which the VM service writes, so both read this one value.
var BuildVersion = "dev"

// UpgradedTo are the upgraded-to annotations that make a VM upgraded for build (api-rules
// §0.4), as the VM service stamps them once it has back-filled the VM's spec.
func UpgradedTo(build string) map[string]string {
	return map[string]string{
		AnnotationUpgradedToBuild:   build,
		AnnotationUpgradedToSchema:  SchemaVersion,
		AnnotationUpgradedToFeature: strconv.FormatUint(activeFeatureBits, 10),
	}
}

// Upgraded tells whether vm carries the upgraded-to annotations of build.
func Upgraded(vm *VirtualMachine, build string) bool {
	return upgraded(vm, VMEnv{BuildVersion: build})
}

// upgraded tells whether the VM service has back-filled vm's spec for this gateway build
// (api-rules §0.4); rules marked ⓤ wait for it. A nil vm is not upgraded.
func upgraded(vm *VirtualMachine, env VMEnv) bool {
	if vm == nil {
		return false
	}
	a := vm.Annotations
	if a[AnnotationUpgradedToBuild] != env.BuildVersion || a[AnnotationUpgradedToSchema] != SchemaVersion {
		return false
	}
	bits, err := strconv.ParseUint(a[AnnotationUpgradedToFeature], 10, 64)
	return err == nil && bits&activeFeatureBits == activeFeatureBits
}

// validateUpgradeGuard is ANN-7 and CTL-11: only upgrade-exempt callers stamp the
// upgraded-to annotations or touch what the upgrade back-fills before it has happened.
func validateUpgradeGuard(r *vmReq) field.ErrorList {
	if r.Env.UpgradeExempt {
		return nil
	}
	errs := upgradeAnnotationErrors(r)
	if upgraded(r.Old, r.Env) {
		return errs
	}
	hw, oldHW := r.New.Spec.Hardware, r.Old.Spec.Hardware
	if hw == nil {
		hw = &VirtualMachineHardwareSpec{}
	}
	if oldHW == nil {
		oldHW = &VirtualMachineHardwareSpec{}
	}
	hwPath := specPath.Child("hardware")
	lists := []struct {
		name     string
		new, old any
	}{
		{"ideControllers", hw.IDEControllers, oldHW.IDEControllers},
		{"nvmeControllers", hw.NVMEControllers, oldHW.NVMEControllers},
		{"sataControllers", hw.SATAControllers, oldHW.SATAControllers},
		{"scsiControllers", hw.SCSIControllers, oldHW.SCSIControllers},
	}
	for _, l := range lists {
		if !equality.Semantic.DeepEqual(l.new, l.old) {
			errs = append(errs, field.Forbidden(hwPath.Child(l.name), "may not change before the VM's schema upgrade"))
		}
	}
	if r.New.Spec.BiosUUID != r.Old.Spec.BiosUUID {
		errs = append(errs, field.Forbidden(specPath.Child("biosUUID"), "may not change before the VM's schema upgrade"))
	}
	return errs
}

// upgradeAnnotationErrors is ANN-7: an upgraded-to annotation added or changed (removal
// is allowed). On create every present key counts as added, our hardening.
func upgradeAnnotationErrors(r *vmReq) field.ErrorList {
	if r.Env.UpgradeExempt {
		return nil
	}
	var old map[string]string
	if r.Old != nil {
		old = r.Old.Annotations
	}
	var errs field.ErrorList
	for _, k := range upgradedToKeys {
		v, ok := r.New.Annotations[k]
		if ov, had := old[k]; ok && (!had || ov != v) {
			errs = append(errs, field.Forbidden(annotationPath.Key(k), "only the VM service may set the schema-upgrade annotations"))
		}
	}
	return errs
}
