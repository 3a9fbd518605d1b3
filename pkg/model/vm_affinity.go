package model

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Topology keys affinity terms may use (AFF-6).
const (
	TopologyKeyZone     = "topology.kubernetes.io/zone"
	TopologyKeyHostname = "kubernetes.io/hostname"
)

// vmopLabelDomain marks the labels vmop manages, which selectors may not match on.
const vmopLabelDomain = "vmoperator.vmware.com"

// validateGroupName is AFF-1: spec.groupName is refused while VM groups are off. They are
// on in our baseline, so every group name is accepted.
func validateGroupName(*vmReq) field.ErrorList { return nil }

// validateAffinity is AFF-2..6 on create (updates are covered by IMM-5): affinity places
// group members, by labels users own, at zone level (anti-affinity also per host).
func validateAffinity(r *vmReq) field.ErrorList {
	a := r.New.Spec.Affinity
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if r.New.Spec.GroupName == "" {
		errs = append(errs, field.Required(specPath.Child("groupName"), "spec.affinity requires a group"))
	}
	path := specPath.Child("affinity")
	zoneOnly := []string{TopologyKeyZone}
	zoneOrHost := []string{TopologyKeyZone, TopologyKeyHostname}
	if aa := a.VMAffinity; aa != nil {
		p := path.Child("vmAffinity")
		errs = append(errs, affinityTermErrors(aa.RequiredDuringSchedulingPreferredDuringExecution, p.Child("requiredDuringSchedulingPreferredDuringExecution"), zoneOnly)...)
		errs = append(errs, affinityTermErrors(aa.PreferredDuringSchedulingPreferredDuringExecution, p.Child("preferredDuringSchedulingPreferredDuringExecution"), zoneOnly)...)
	}
	if aa := a.VMAntiAffinity; aa != nil {
		p := path.Child("vmAntiAffinity")
		errs = append(errs, affinityTermErrors(aa.RequiredDuringSchedulingPreferredDuringExecution, p.Child("requiredDuringSchedulingPreferredDuringExecution"), zoneOrHost)...)
		errs = append(errs, affinityTermErrors(aa.PreferredDuringSchedulingPreferredDuringExecution, p.Child("preferredDuringSchedulingPreferredDuringExecution"), zoneOrHost)...)
	}
	return errs
}

// affinityTermErrors is AFF-3..6 for one list of terms.
func affinityTermErrors(terms []VMAffinityTerm, path *field.Path, topologyKeys []string) field.ErrorList {
	var errs field.ErrorList
	for k, t := range terms {
		p := path.Index(k)
		if t.LabelSelector != nil {
			errs = append(errs, selectorErrors(t.LabelSelector, p.Child("labelSelector"))...)
		}
		if !slices.Contains(topologyKeys, t.TopologyKey) {
			errs = append(errs, field.NotSupported(p.Child("topologyKey"), t.TopologyKey, topologyKeys))
		}
	}
	return errs
}

// selectorErrors is AFF-3..5: selectors use In expressions over labels users own.
func selectorErrors(ls *metav1.LabelSelector, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(ls.MatchLabels)) {
		if strings.Contains(key, vmopLabelDomain) {
			errs = append(errs, field.Forbidden(path.Child("matchLabels"), "label "+key+" is managed by vmop and may not be selected on"))
		}
	}
	for m, e := range ls.MatchExpressions {
		p := path.Child("matchExpressions").Index(m)
		if e.Operator != metav1.LabelSelectorOpIn {
			errs = append(errs, field.NotSupported(p.Child("operator"), e.Operator, []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn}))
			continue
		}
		if strings.Contains(e.Key, vmopLabelDomain) {
			errs = append(errs, field.Forbidden(p.Child("key"), "label "+e.Key+" is managed by vmop and may not be selected on"))
		}
	}
	return errs
}
