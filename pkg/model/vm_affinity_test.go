package model

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineAffinityRules(t *testing.T) {
	term := func(topologyKey string, sel *metav1.LabelSelector) []VMAffinityTerm {
		return []VMAffinityTerm{{LabelSelector: sel, TopologyKey: topologyKey}}
	}
	labels := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	expr := func(k string, op metav1.LabelSelectorOperator) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k, Operator: op, Values: []string{"x"}}}}
	}
	affinity := func(a AffinitySpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.GroupName, vm.Spec.Affinity = "my-group", &a }
	}
	required := func(topologyKey string, sel *metav1.LabelSelector) func(*VirtualMachine) {
		return affinity(AffinitySpec{VMAffinity: &VMAffinitySpec{RequiredDuringSchedulingPreferredDuringExecution: term(topologyKey, sel)}})
	}
	antiPreferred := func(topologyKey string) func(*VirtualMachine) {
		return affinity(AffinitySpec{VMAntiAffinity: &VMAntiAffinitySpec{PreferredDuringSchedulingPreferredDuringExecution: term(topologyKey, labels("app", "db"))}})
	}
	const req = "spec.affinity.vmAffinity.requiredDuringSchedulingPreferredDuringExecution[0]"
	runVMCases(t, []vmCase{
		{name: "AFF-1 group name accepted (groups are on)", change: func(vm *VirtualMachine) { vm.Spec.GroupName = "my-group" }, code: 200},
		{name: "AFF-1 group name changed on update", update: true, change: func(vm *VirtualMachine) { vm.Spec.GroupName = "other-group" }, code: 200},

		{name: "AFF-2 affinity in a group", change: required(TopologyKeyZone, labels("app", "db")), code: 200},
		{name: "AFF-2 affinity without a group", change: func(vm *VirtualMachine) {
			required(TopologyKeyZone, labels("app", "db"))(vm)
			vm.Spec.GroupName = ""
		}, code: 422, path: "spec.groupName", typ: field.ErrorTypeRequired},
		{name: "AFF-3 selector on user labels", change: required(TopologyKeyZone, labels("example.com/tier", "db")), code: 200},
		{name: "AFF-3 selector on a vmop label", change: required(TopologyKeyZone, labels("vmoperator.vmware.com/paused", "x")),
			code: 422, path: req + ".labelSelector.matchLabels", typ: field.ErrorTypeForbidden},
		{name: "AFF-4 In expression", change: required(TopologyKeyZone, expr("app", metav1.LabelSelectorOpIn)), code: 200},
		{name: "AFF-4 NotIn expression", change: required(TopologyKeyZone, expr("app", metav1.LabelSelectorOpNotIn)),
			code: 422, path: req + ".labelSelector.matchExpressions[0].operator", typ: field.ErrorTypeNotSupported},
		{name: "AFF-5 In expression on a user label", change: required(TopologyKeyZone, expr("example.com/tier", metav1.LabelSelectorOpIn)), code: 200},
		{name: "AFF-5 In expression on a vmop label", change: required(TopologyKeyZone, expr("image.vmoperator.vmware.com/type", metav1.LabelSelectorOpIn)),
			code: 422, path: req + ".labelSelector.matchExpressions[0].key", typ: field.ErrorTypeForbidden},
		{name: "AFF-6 affinity per zone", change: affinity(AffinitySpec{VMAffinity: &VMAffinitySpec{PreferredDuringSchedulingPreferredDuringExecution: term(TopologyKeyZone, labels("app", "db"))}}), code: 200},
		{name: "AFF-6 affinity per host", change: required(TopologyKeyHostname, labels("app", "db")),
			code: 422, path: req + ".topologyKey", typ: field.ErrorTypeNotSupported},
		{name: "AFF-6 anti-affinity per host", change: antiPreferred(TopologyKeyHostname), code: 200},
		{name: "AFF-6 anti-affinity per rack", change: antiPreferred("example.com/rack"),
			code: 422, path: "spec.affinity.vmAntiAffinity.preferredDuringSchedulingPreferredDuringExecution[0].topologyKey", typ: field.ErrorTypeNotSupported},
	})
}
