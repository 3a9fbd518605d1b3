package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ComputePolicy is a vSphere compute policy that applies to the VMs it matches (Mandatory) or to
// the VMs that name it (Optional).
type ComputePolicy struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the policy's enforcement, match and tags.
	Spec ComputePolicySpec `json:"spec,omitempty"`

	// Status is the observed state of the policy.
	Status ComputePolicyStatus `json:"status,omitempty"`
}

// ComputePolicyList is a list of compute policies.
type ComputePolicyList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the compute policies in the list.
	Items []ComputePolicy `json:"items"`
}

// ComputePolicySpec is the desired state of a compute policy.
type ComputePolicySpec struct {
	// Description is free text describing the policy.
	Description string `json:"description,omitempty"`

	// PolicyID is the ID of the vSphere compute policy behind this object, if any.
	PolicyID string `json:"policyID,omitempty"`

	// EnforcementMode is Mandatory (applied to every matching VM) or Optional (applied when a VM
	// lists it in spec.policies).
	// +kubebuilder:default=Mandatory
	EnforcementMode PolicyEnforcementMode `json:"enforcementMode,omitempty"`

	// Match selects the workloads the policy applies to; a Mandatory policy without it applies
	// to all.
	Match *MatchSpec `json:"match,omitempty"`

	// Tags name the TagPolicies whose vSphere tags are attached to workloads under this policy.
	// +listType=set
	Tags []string `json:"tags,omitempty"`
}

// PolicyEnforcementMode says how a compute policy is applied.
// +kubebuilder:validation:Enum=Mandatory;Optional
type PolicyEnforcementMode string

// Mandatory policies apply by match; Optional ones only when a VM names them.
const (
	PolicyEnforcementModeMandatory PolicyEnforcementMode = "Mandatory"
	PolicyEnforcementModeOptional  PolicyEnforcementMode = "Optional"
)

// ComputePolicyStatus is the observed state of a compute policy.
type ComputePolicyStatus struct {
	// ObservedGeneration is the metadata.generation last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions report the policy's state.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TagPolicy lists vSphere tags that compute policies attach to workloads.
type TagPolicy struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the list of tags.
	Spec TagPolicySpec `json:"spec,omitempty"`

	// Status is the observed state of the tag policy; it is empty.
	Status TagPolicyStatus `json:"status,omitempty"`
}

// TagPolicyList is a list of tag policies.
type TagPolicyList struct {
	// TypeMeta carries the object's apiVersion and kind.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the tag policies in the list.
	Items []TagPolicy `json:"items"`
}

// TagPolicySpec is the desired state of a tag policy.
type TagPolicySpec struct {
	// Tags are the UUIDs of the vSphere tags to attach.
	// +listType=set
	Tags []string `json:"tags,omitempty"`
}

// TagPolicyStatus is the observed state of a tag policy; it has no fields.
type TagPolicyStatus struct{}
