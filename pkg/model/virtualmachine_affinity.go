package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AffinitySpec holds the rules that place a VM relative to other VMs.
type AffinitySpec struct {
	// VMAffinity lists rules that place this VM together with the VMs they select.
	VMAffinity *VMAffinitySpec `json:"vmAffinity,omitempty"`

	// VMAntiAffinity lists rules that keep this VM apart from the VMs they select.
	VMAntiAffinity *VMAntiAffinitySpec `json:"vmAntiAffinity,omitempty"`
}

// VMAffinitySpec lists the rules that co-locate a VM with other VMs.
type VMAffinitySpec struct {
	// RequiredDuringSchedulingPreferredDuringExecution must hold for the VM to be placed, and
	// should keep holding while it runs; all terms must be satisfied.
	// +listType=atomic
	RequiredDuringSchedulingPreferredDuringExecution []VMAffinityTerm `json:"requiredDuringSchedulingPreferredDuringExecution,omitempty"`

	// PreferredDuringSchedulingPreferredDuringExecution is honoured when possible, at placement
	// and while the VM runs.
	// +listType=atomic
	PreferredDuringSchedulingPreferredDuringExecution []VMAffinityTerm `json:"preferredDuringSchedulingPreferredDuringExecution,omitempty"`
}

// VMAntiAffinitySpec lists the rules that keep a VM apart from other VMs.
type VMAntiAffinitySpec struct {
	// RequiredDuringSchedulingPreferredDuringExecution must hold for the VM to be placed, and
	// should keep holding while it runs; all terms must be satisfied.
	// +listType=atomic
	RequiredDuringSchedulingPreferredDuringExecution []VMAffinityTerm `json:"requiredDuringSchedulingPreferredDuringExecution,omitempty"`

	// PreferredDuringSchedulingPreferredDuringExecution is honoured when possible, at placement
	// and while the VM runs.
	// +listType=atomic
	PreferredDuringSchedulingPreferredDuringExecution []VMAffinityTerm `json:"preferredDuringSchedulingPreferredDuringExecution,omitempty"`
}

// VMAffinityTerm selects VMs by label and names the topology level a rule applies at.
type VMAffinityTerm struct {
	// LabelSelector selects the other VMs by their labels; when empty it selects none.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// TopologyKey is the level the rule applies at: topology.kubernetes.io/zone, or
	// kubernetes.io/hostname for anti-affinity.
	// +kubebuilder:validation:Required
	TopologyKey string `json:"topologyKey"`
}
