package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MatchSpec selects the workloads a compute policy applies to; image and workload are always
// and-ed with the result of the nested matches.
type MatchSpec struct {
	// Op combines the nested matches: And or Or.
	// +kubebuilder:validation:Enum=And;Or
	// +kubebuilder:default=And
	Op string `json:"op,omitempty"`

	// Match lists nested matches combined with op; its schema is not expanded because the type
	// is recursive.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Match []MatchSpec `json:"match,omitempty"`

	// Image matches the image the workload was deployed from.
	Image *MatchImageSpec `json:"image,omitempty"`

	// Workload matches the workload itself.
	Workload *MatchWorkloadSpec `json:"workload,omitempty"`
}

// The boolean operations of a match.
const (
	MatchOpAnd = "And"
	MatchOpOr  = "Or"
)

// MatchImageSpec matches a workload's image.
type MatchImageSpec struct {
	// Name matches the image's name.
	Name *StringMatcherSpec `json:"name,omitempty"`

	// Labels are label requirements the image must meet.
	Labels []metav1.LabelSelectorRequirement `json:"labels,omitempty"`
}

// MatchWorkloadSpec matches a workload.
type MatchWorkloadSpec struct {
	// Guest matches the workload's guest operating system.
	Guest *MatchGuestSpec `json:"guest,omitempty"`

	// Labels are label requirements the workload must meet.
	Labels []metav1.LabelSelectorRequirement `json:"labels,omitempty"`

	// Kind is the kind of workload matched: Pod or VirtualMachine; empty matches both.
	// +kubebuilder:validation:Enum=Pod;VirtualMachine
	Kind string `json:"kind,omitempty"`
}

// MatchGuestSpec matches a workload's guest operating system.
type MatchGuestSpec struct {
	// GuestID matches the vSphere guest identifier, e.g. ubuntu64Guest.
	GuestID *StringMatcherSpec `json:"guestID,omitempty"`

	// GuestFamily matches the guest family: Darwin, Linux, Netware, Other, Solaris or Windows.
	GuestFamily *GuestFamilyMatcherSpec `json:"guestFamily,omitempty"`
}

// StringMatcherSpec compares a string with a value.
type StringMatcherSpec struct {
	// Op is the comparison.
	// +kubebuilder:validation:Enum=Equal;NotEqual;Contains;NotContains;HasPrefix;NotHasPrefix;HasSuffix;NotHasSuffix;Match;NotMatch
	// +kubebuilder:default=Equal
	Op string `json:"op,omitempty"`

	// Value is what the string is compared with; a regular expression for Match and NotMatch.
	Value string `json:"value,omitempty"`
}

// GuestFamilyMatcherSpec compares a guest family with a value.
type GuestFamilyMatcherSpec struct {
	// Op is the comparison.
	// +kubebuilder:validation:Enum=Equal;NotEqual;Contains;NotContains;HasPrefix;NotHasPrefix;HasSuffix;NotHasSuffix;Match;NotMatch
	// +kubebuilder:default=Equal
	Op string `json:"op,omitempty"`

	// Value is the guest family compared with.
	// +kubebuilder:validation:Enum=Darwin;Linux;Netware;Other;Solaris;Windows
	Value string `json:"value,omitempty"`
}

// The string comparisons a matcher can make.
const (
	MatchEqual        = "Equal"
	MatchNotEqual     = "NotEqual"
	MatchContains     = "Contains"
	MatchNotContains  = "NotContains"
	MatchHasPrefix    = "HasPrefix"
	MatchNotHasPrefix = "NotHasPrefix"
	MatchHasSuffix    = "HasSuffix"
	MatchNotHasSuffix = "NotHasSuffix"
	MatchRegexp       = "Match"
	MatchNotRegexp    = "NotMatch"
)
