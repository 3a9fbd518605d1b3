package model

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePowerState is PWR-1 on create and PWR-2, PWR-3, PWR-8, PWR-11, PWR-12 on
// update: the desired-state transitions, the guest ID under G, and the cells of the
// seed's transition table that the observed state rules out.
func validatePowerState(r *vmReq) field.ErrorList {
	path := specPath.Child("powerState")
	desired := r.New.Spec.PowerState
	if r.create() {
		if desired == PowerStateSuspended {
			return field.ErrorList{field.Invalid(path, desired, "a new VM cannot be suspended")}
		}
		return nil
	}
	if desired == "" {
		return field.ErrorList{field.Invalid(path, desired, "must be set on update")}
	}
	var errs field.ErrorList
	stored := r.Old.Spec.PowerState
	if stored == PowerStateOff && desired == PowerStateSuspended {
		errs = append(errs, field.Invalid(path, desired, "a VM desired PoweredOff cannot be suspended"))
	}
	if onGate(r) && r.New.Spec.GuestID != r.Old.Spec.GuestID {
		errs = append(errs, field.Forbidden(specPath.Child("guestID"), "may not change while the VM is desired PoweredOn"))
	}
	if desired == stored {
		return errs // PWR-11/12 judge requested changes only; an unchanged desire is no request
	}
	switch observed := r.Env.ObservedPower; {
	case desired == PowerStateSuspended && observed == PowerStateOff:
		errs = append(errs, field.Invalid(path, desired, "a VM observed PoweredOff cannot be suspended"))
	case desired == PowerStateOff && observed == PowerStateSuspended && r.New.Spec.PowerOffMode == PowerOpModeSoft:
		errs = append(errs, field.Invalid(path, desired, "a suspended VM cannot be powered off with powerOffMode Soft; use Hard or TrySoft"))
	}
	return errs
}
