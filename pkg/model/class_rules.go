package model

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultVirtualMachineClass is stage 2 for VirtualMachineClasses (api-rules §9.1.1). old
// is nil on create. It never denies; the result is for symmetry with the other kinds.
func DefaultVirtualMachineClass(class, old *VirtualMachineClass) *field.Error {
	// The controller that reconciles a class's VMs may change but not be cleared: an
	// empty value is taken as "unchanged", so clients that drop the field keep it.
	if old != nil && class.Spec.ControllerName == "" {
		class.Spec.ControllerName = old.Spec.ControllerName
	}
	return nil
}

// ValidateVirtualMachineClass is stage 3 for VirtualMachineClasses (api-rules §9.1.2): on
// create, a CPU or memory request may not exceed its limit. On create and update the
// configSpec must be one the class's VMs can be given whole (ClassConfigSpec): a class
// that cannot be applied is never stored.
func ValidateVirtualMachineClass(class, old *VirtualMachineClass) field.ErrorList {
	_, errs := ClassConfigSpec(class.Spec.ConfigSpec)
	if old != nil || class.Spec.Policies == nil || class.Spec.Policies.Resources == nil {
		return errs
	}
	res := class.Spec.Policies.Resources
	if res.Requests == nil || res.Limits == nil {
		return errs
	}
	requests := field.NewPath("spec", "policies", "resources", "requests")
	errs = append(errs, classRequestWithinLimit(requests.Child("cpu"), res.Requests.Cpu, res.Limits.Cpu)...)
	errs = append(errs, classRequestWithinLimit(requests.Child("memory"), res.Requests.Memory, res.Limits.Memory)...)
	return errs
}

// classRequestWithinLimit holds when either amount is unset or zero (no reservation, or
// no limit), or the request is at most the limit.
func classRequestWithinLimit(p *field.Path, request, limit *resource.Quantity) field.ErrorList {
	if request == nil || limit == nil || request.IsZero() || limit.IsZero() || request.Cmp(*limit) <= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, request.String(), fmt.Sprintf("must not exceed the limit %s", limit))}
}
