package model

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// defaultVirtualMachineUpdate applies the update defaults of api-rules §6.2 in rule order
// (D1 has run in the schema stage).
func defaultVirtualMachineUpdate(vm, old *VirtualMachine, env VMEnv) *field.Error {
	markPendingResize(vm, old) // D14
	if err := defaultNextRestartTime(vm, old, env); err != nil {
		return err // D15
	}
	// D16: MutableNetworks is off, so there is no network back-fill on update.
	applyGroupChanges(vm, old) // D17
	defaultVolumeModes(vm)     // D12 again, as D18 needs it
	placeDevices(vm, old, env) // D18, D19
	return nil
}

// markPendingResize is D14: a changed class name tells the VM service which class was
// applied before, so it knows a resize is pending.
func markPendingResize(vm, old *VirtualMachine) {
	if vm.Spec.ClassName == old.Spec.ClassName {
		return
	}
	if _, ok := vm.Annotations[AnnotationLastResizedClass]; ok {
		return
	}
	last, _ := json.Marshal(struct {
		Name string `json:"name"`
	}{old.Spec.ClassName}) // a struct of one string always marshals
	if vm.Annotations == nil {
		vm.Annotations = map[string]string{}
	}
	vm.Annotations[AnnotationLastResizedClass] = string(last)
}

// defaultNextRestartTime is D15: the only value a user may write is "now", which becomes
// the current time, and only for a VM desired PoweredOn.
func defaultNextRestartTime(vm, old *VirtualMachine, env VMEnv) *field.Error {
	s := &vm.Spec
	switch {
	case s.NextRestartTime == "":
		s.NextRestartTime = old.Spec.NextRestartTime
	case strings.EqualFold(s.NextRestartTime, "now"):
		if old.Spec.PowerState != PowerStateOn {
			return field.Invalid(nextRestartTimePath, s.NextRestartTime, "only a VM desired PoweredOn may be restarted")
		}
		s.NextRestartTime = env.Now().UTC().Format(time.RFC3339Nano)
	case s.NextRestartTime != old.Spec.NextRestartTime:
		return field.Invalid(nextRestartTimePath, s.NextRestartTime, `only "now" may be written`)
	}
	return nil
}

// applyGroupChanges is D17: leaving a group drops its ownerReference, and a direct power
// change cancels a group-scheduled one.
func applyGroupChanges(vm, old *VirtualMachine) {
	if vm.Spec.GroupName != old.Spec.GroupName && old.Spec.GroupName != "" {
		vm.OwnerReferences = slices.DeleteFunc(vm.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return ref.Kind == "VirtualMachineGroup" && ref.Name == old.Spec.GroupName
		})
	}
	if vm.Spec.PowerState == old.Spec.PowerState {
		return
	}
	v, ok := vm.Annotations[AnnotationApplyPowerStateTime]
	ov, had := old.Annotations[AnnotationApplyPowerStateTime]
	if ok && had && v == ov {
		delete(vm.Annotations, AnnotationApplyPowerStateTime)
	}
}
