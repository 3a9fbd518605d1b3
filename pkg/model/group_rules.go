package model

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationLastUpdatedPowerStateTime is when a group's power state was last set or a sync
// forced; the group service applies the power state to members when it is newer than
// status.lastUpdatedPowerStateTime. Only defaulting (and privileged callers) write it.
const AnnotationLastUpdatedPowerStateTime = "vmoperator.vmware.com.protected/last-updated-power-state-time"

// GroupEnv is everything VirtualMachineGroup defaulting and validation know besides the
// objects.
type GroupEnv struct {
	Privileged bool             // api-rules §0.3
	Now        func() time.Time // required: stamps forced syncs and power state changes
}

// DefaultVirtualMachineGroup is stage 2 for VirtualMachineGroups (api-rules §9.3,
// defaulting 1–3). old is nil on create. It returns the one denial that ends the request
// with 403, or nil.
func DefaultVirtualMachineGroup(g, old *VirtualMachineGroup, env GroupEnv) *field.Error {
	stored := old
	if stored == nil {
		stored = &VirtualMachineGroup{}
	}
	now := env.Now().UTC().Format(time.RFC3339Nano)

	// 1. nextForcePowerStateSyncTime: only "now" may be written; it becomes the instant.
	forced := false
	switch next := g.Spec.NextForcePowerStateSyncTime; {
	case next == "":
		g.Spec.NextForcePowerStateSyncTime = stored.Spec.NextForcePowerStateSyncTime
	case strings.EqualFold(next, "now"):
		g.Spec.NextForcePowerStateSyncTime = now
		forced = true
	case next != stored.Spec.NextForcePowerStateSyncTime:
		return field.Invalid(field.NewPath("spec", "nextForcePowerStateSyncTime"), next, `may only be set to "now"`)
	}

	// 2. A new power state or a forced sync is applied to the members from now on; a
	// pending delayed apply (set by a parent group) is dropped unless this very request
	// is the parent setting it.
	if forced || g.Spec.PowerState != stored.Spec.PowerState {
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[AnnotationLastUpdatedPowerStateTime] = now
		if g.Annotations[AnnotationApplyPowerStateTime] == stored.Annotations[AnnotationApplyPowerStateTime] {
			delete(g.Annotations, AnnotationApplyPowerStateTime)
		}
	}

	// 3. Leaving a parent group ends its ownership.
	if old != nil && g.Spec.GroupName != old.Spec.GroupName && old.Spec.GroupName != "" {
		refs := g.OwnerReferences[:0]
		for _, ref := range g.OwnerReferences {
			gv, _ := schema.ParseGroupVersion(ref.APIVersion)
			if gv.Group == GroupVMOperator && ref.Kind == "VirtualMachineGroup" && ref.Name == old.Spec.GroupName {
				continue
			}
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			refs = nil
		}
		g.OwnerReferences = refs
	}
	return nil
}

// ValidateVirtualMachineGroup is stage 3 for VirtualMachineGroups (api-rules §9.3,
// VMG-1..6) on the defaulted object; old is nil on create. Errors come in rule order.
func ValidateVirtualMachineGroup(g, old *VirtualMachineGroup, env GroupEnv) field.ErrorList {
	stored := old
	if stored == nil {
		stored = &VirtualMachineGroup{}
	}
	var errs field.ErrorList

	lastUpdated := field.NewPath("metadata", "annotations").Key(AnnotationLastUpdatedPowerStateTime)
	value := g.Annotations[AnnotationLastUpdatedPowerStateTime]
	// VMG-1: defaulting stamps it together with a power state change or a forced sync;
	// any other change is the caller's own.
	if !env.Privileged && value != stored.Annotations[AnnotationLastUpdatedPowerStateTime] &&
		g.Spec.PowerState == stored.Spec.PowerState &&
		g.Spec.NextForcePowerStateSyncTime == stored.Spec.NextForcePowerStateSyncTime {
		errs = append(errs, field.Forbidden(lastUpdated, "only privileged users may change this annotation"))
	}
	// VMG-2
	if value != "" {
		if _, err := time.Parse(time.RFC3339Nano, value); err != nil {
			errs = append(errs, field.Invalid(lastUpdated, value, "must be a time in RFC3339Nano format"))
		}
	}

	// VMG-3: once members have been given a power state, the group keeps deciding it.
	if stored.Spec.PowerState != "" && g.Spec.PowerState == "" {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "powerState"), "may not be cleared once set"))
	}

	// VMG-4, VMG-5
	seen := map[string]bool{}
	for i, step := range g.Spec.BootOrder {
		for j, m := range step.Members {
			p := field.NewPath("spec", "bootOrder").Index(i).Child("members").Index(j)
			kind := m.Kind
			if kind == "" {
				kind = GroupMemberKindVirtualMachine // the schema default
			}
			key := kind + "/" + m.Name
			if seen[key] {
				errs = append(errs, field.Duplicate(p, key))
			}
			seen[key] = true
			if kind == GroupMemberKindVirtualMachineGroup && m.Name == g.Name {
				errs = append(errs, field.Invalid(p, key, "a group may not be its own member"))
			}
		}
	}

	// VMG-6
	if g.Spec.GroupName != "" && g.Spec.GroupName == g.Name {
		errs = append(errs, field.Invalid(field.NewPath("spec", "groupName"), g.Spec.GroupName, "a group may not be its own parent"))
	}
	return errs
}
