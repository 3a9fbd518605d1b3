package placement

// Compute policies live in placement: placement owns the VM's existence in vCenter, already
// reads its image, and a policy's vSphere side is the tags of its TagPolicies on the VM
// (vcsim simulates no compute policy service). They are applied as soon as the VM exists,
// in the slice power's gate waits for, so a new VM powers on with its policies' tags.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// Plurals of the policy kinds: a change of one reaches every VM of its namespace (Related).
const (
	pluralComputePolicies = "computepolicies"
	pluralTagPolicies     = "tagpolicies"
)

// policyAPIVersion is the apiVersion spec.policies entries and status.policies carry.
const policyAPIVersion = model.GroupPolicy + "/" + model.VersionPolicy

// policyPlan is what the policies applied to a VM need in vCenter.
type policyPlan struct {
	applied []model.PolicyStatus // sorted by name
	tags    []string             // tag IDs to attach, sorted
	// known are the tags of every TagPolicy of the namespace: those placement may detach
	// when no applied policy names them any more (beside any tag of its own category).
	known map[string]bool
}

// policyError is a policy problem the VM's owner or the policies' author must fix; it
// becomes VirtualMachinePoliciesReady False, never a retried error.
type policyError struct{ reason, msg string }

func (e *policyError) Error() string { return e.msg }

// namespacePolicies are the ComputePolicies and TagPolicies of a namespace.
type namespacePolicies struct {
	computes    []model.ComputePolicy
	tagPolicies map[string][]string // name → tag IDs
	badTag      map[string]string   // name → an entry that is not a tag UUID
	known       map[string]bool     // every tag ID a TagPolicy names
}

// readPolicies reads the namespace's policy objects from SPECS.
func (r *reconciler) readPolicies(ctx context.Context, namespace string) (namespacePolicies, error) {
	ns := namespacePolicies{tagPolicies: map[string][]string{}, badTag: map[string]string{}, known: map[string]bool{}}
	if err := r.liveList(ctx, pluralComputePolicies, namespace, func(b []byte) error {
		var p model.ComputePolicy
		err := json.Unmarshal(b, &p)
		ns.computes = append(ns.computes, p)
		return err
	}); err != nil {
		return ns, err
	}
	err := r.liveList(ctx, pluralTagPolicies, namespace, func(b []byte) error {
		var p model.TagPolicy
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		ids := make([]string, 0, len(p.Spec.Tags))
		for _, t := range p.Spec.Tags {
			id, ok := tagURN(t)
			if !ok {
				ns.badTag[p.Name] = t
				continue
			}
			ids = append(ids, id)
			ns.known[id] = true
		}
		ns.tagPolicies[p.Name] = ids
		return nil
	})
	return ns, err
}

// planPolicies evaluates the namespace's ComputePolicies for the VM: every Mandatory one whose
// match selects it and every Optional one it names in spec.policies, each with the tags of
// the TagPolicies it names. A *policyError says what cannot be resolved.
func (r *reconciler) planPolicies(ctx context.Context, vm *model.VirtualMachine, w model.PolicyWorkload) (policyPlan, error) {
	ns, err := r.readPolicies(ctx, vm.Namespace)
	if err != nil {
		return policyPlan{}, err
	}
	computes, tagPolicies, badTag := ns.computes, ns.tagPolicies, ns.badTag
	plan := policyPlan{known: ns.known}

	byName := map[string]*model.ComputePolicy{}
	for i := range computes {
		byName[computes[i].Name] = &computes[i]
	}
	apply := map[string]*model.ComputePolicy{}
	for i, ref := range vm.Spec.Policies {
		p := byName[ref.Name]
		switch {
		case ref.APIVersion != policyAPIVersion || ref.Kind != "ComputePolicy":
			return policyPlan{}, &policyError{model.ReasonInvalid, fmt.Sprintf(
				"spec.policies[%d] names a %s %s: only %s ComputePolicies can be applied", i, ref.APIVersion, ref.Kind, policyAPIVersion)}
		case p == nil:
			return policyPlan{}, &policyError{model.ReasonNotFound, fmt.Sprintf(
				"spec.policies[%d]: ComputePolicy %s not found in namespace %s", i, ref.Name, vm.Namespace)}
		case enforcement(p) != model.PolicyEnforcementModeOptional:
			return policyPlan{}, &policyError{model.ReasonInvalid, fmt.Sprintf(
				"spec.policies[%d]: ComputePolicy %s is Mandatory: it applies by its match, spec.policies names only Optional ones", i, ref.Name)}
		}
		apply[p.Name] = p
	}
	for i := range computes {
		p := &computes[i]
		if enforcement(p) != model.PolicyEnforcementModeMandatory {
			continue
		}
		ok, err := p.Spec.Match.Matches(w)
		if err != nil {
			return policyPlan{}, &policyError{model.ReasonInvalid, fmt.Sprintf("ComputePolicy %s: spec.match.%v", p.Name, err)}
		}
		if ok {
			apply[p.Name] = p
		}
	}

	want := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(apply)) {
		p := apply[name]
		for _, tp := range p.Spec.Tags {
			ids, found := tagPolicies[tp]
			if !found {
				return policyPlan{}, &policyError{model.ReasonNotFound, fmt.Sprintf(
					"ComputePolicy %s names TagPolicy %s, which does not exist in namespace %s", p.Name, tp, vm.Namespace)}
			}
			if bad, ok := badTag[tp]; ok {
				return policyPlan{}, &policyError{model.ReasonInvalid, fmt.Sprintf(
					"TagPolicy %s (of ComputePolicy %s): tag %q is not a vSphere tag UUID", tp, p.Name, bad)}
			}
			for _, id := range ids {
				want[id] = true
			}
		}
		plan.applied = append(plan.applied, model.PolicyStatus{
			LocalObjectRef: model.LocalObjectRef{APIVersion: policyAPIVersion, Kind: "ComputePolicy", Name: p.Name},
			Generation:     p.Generation})
	}
	plan.tags = slices.Sorted(maps.Keys(want))
	return plan, nil
}

// enforcement is the policy's mode, Mandatory when unset (the schema's default).
func enforcement(p *model.ComputePolicy) model.PolicyEnforcementMode {
	if p.Spec.EnforcementMode == "" {
		return model.PolicyEnforcementModeMandatory
	}
	return p.Spec.EnforcementMode
}

// tagURNPrefix and tagURNSuffix frame a vSphere tag ID around its UUID.
const (
	tagURNPrefix = "urn:vmomi:InventoryServiceTag:"
	tagURNSuffix = ":GLOBAL"
)

// tagURN is the vSphere tag ID of a TagPolicy entry: the ID itself, or a bare UUID in its
// URN form; false for anything else.
func tagURN(entry string) (string, bool) {
	u := strings.TrimSuffix(strings.TrimPrefix(entry, tagURNPrefix), tagURNSuffix)
	if _, err := uuid.Parse(u); err != nil || (u != entry && entry != tagURNPrefix+u+tagURNSuffix) {
		return "", false
	}
	return tagURNPrefix + strings.ToLower(u) + tagURNSuffix, true
}

// policyWorkload is what the policies' matches see of the VM: its labels, its image (name
// and labels; none when the image is gone) and the guest of its vSphere configuration.
func (r *reconciler) policyWorkload(ctx context.Context, vm *model.VirtualMachine, guestID string) (model.PolicyWorkload, error) {
	w := model.PolicyWorkload{Kind: "VirtualMachine", Labels: vm.Labels, GuestID: guestID,
		GuestFamily: guestFamily(guestID)}
	img := vm.Spec.Image
	if img == nil || img.Name == "" {
		return w, nil
	}
	ref := events.Ref{Plural: pluralImages, Namespace: vm.Namespace, Name: img.Name}
	if img.Kind == "ClusterVirtualMachineImage" {
		ref = events.Ref{Plural: pluralClusterImages, Name: img.Name}
	}
	body, found, err := r.liveSpec(ctx, ref)
	if err != nil || !found {
		return w, err
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return w, &policyError{model.ReasonInvalid, fmt.Sprintf("image %s: %v", img.Name, err)}
	}
	w.ImageName, w.ImageLabels = img.Name, meta.Metadata.Labels
	return w, nil
}

// guestFamily is the policy API's name of the family of a vSphere guest ID.
func guestFamily(guestID string) string {
	if guestID == "" {
		return ""
	}
	switch types.GuestIDToFamily(guestID) {
	case types.VirtualMachineGuestOsFamilyDarwinGuestFamily:
		return "Darwin"
	case types.VirtualMachineGuestOsFamilyLinuxGuest:
		return "Linux"
	case types.VirtualMachineGuestOsFamilyNetwareGuest:
		return "Netware"
	case types.VirtualMachineGuestOsFamilySolarisGuest:
		return "Solaris"
	case types.VirtualMachineGuestOsFamilyWindowsGuest:
		return "Windows"
	}
	return "Other"
}

// liveList hands each live object of plural in namespace to add, in name order.
func (r *reconciler) liveList(ctx context.Context, plural, namespace string, add func([]byte) error) error {
	subjects, err := events.Subjects(ctx, r.js, events.StreamSpecs, events.NamespaceSpecFilter(plural, namespace))
	if err != nil {
		return err
	}
	for _, subj := range subjects {
		ref, err := events.ParseSpecSubject(subj)
		if err != nil {
			return err
		}
		body, found, err := r.liveSpec(ctx, ref)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		if err := add(body); err != nil {
			return &policyError{model.ReasonInvalid, fmt.Sprintf("%s %s: %v", plural, ref.Name, err)}
		}
	}
	return nil
}

// applyPolicies attaches the tags of the policies that apply to the VM and reports them in
// status.policies and VirtualMachinePoliciesReady. While a policy problem holds, nothing
// changes in vCenter and st keeps the last status.policies.
func (r *reconciler) applyPolicies(ctx context.Context, vm *model.VirtualMachine, v *vmState, st *model.VirtualMachineStatus, conds *conditions) error {
	w, err := r.policyWorkload(ctx, vm, v.guestID)
	plan := policyPlan{}
	if err == nil {
		plan, err = r.planPolicies(ctx, vm, w)
	}
	var problem *policyError
	if errors.As(err, &problem) {
		conds.fail(model.ConditionPoliciesReady, problem.reason, problem.msg)
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.syncTags(ctx, v.ref, plan); err != nil {
		return err
	}
	st.Policies = plan.applied
	conds.ok(model.ConditionPoliciesReady)
	return nil
}
