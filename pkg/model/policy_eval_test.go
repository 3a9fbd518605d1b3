package model

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMatchSpecMatches(t *testing.T) {
	ubuntu := PolicyWorkload{Kind: "VirtualMachine", Labels: map[string]string{"tier": "web"},
		GuestID: "ubuntu64Guest", GuestFamily: "Linux", ImageName: "vmi-0a0044d7c690bcbea",
		ImageLabels: map[string]string{"os": "ubuntu"}}
	in := func(key string, values ...string) []metav1.LabelSelectorRequirement {
		return []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values}}
	}
	str := func(op, v string) *StringMatcherSpec { return &StringMatcherSpec{Op: op, Value: v} }
	for _, tc := range []struct {
		name  string
		match *MatchSpec
		want  bool
	}{
		{"no match selects all", nil, true},
		{"kind", &MatchSpec{Workload: &MatchWorkloadSpec{Kind: "VirtualMachine"}}, true},
		{"other kind", &MatchSpec{Workload: &MatchWorkloadSpec{Kind: "Pod"}}, false},
		{"workload label", &MatchSpec{Workload: &MatchWorkloadSpec{Labels: in("tier", "web", "db")}}, true},
		{"workload label missing", &MatchSpec{Workload: &MatchWorkloadSpec{Labels: in("tier", "db")}}, false},
		{"image label", &MatchSpec{Image: &MatchImageSpec{Labels: in("os", "ubuntu")}}, true},
		{"image name prefix", &MatchSpec{Image: &MatchImageSpec{Name: str(MatchHasPrefix, "vmi-")}}, true},
		{"image name equal by default", &MatchSpec{Image: &MatchImageSpec{Name: str("", "vmi-other")}}, false},
		{"guest ID regexp", &MatchSpec{Workload: &MatchWorkloadSpec{Guest: &MatchGuestSpec{GuestID: str(MatchRegexp, "^ubuntu.*Guest$")}}}, true},
		{"guest ID not contains", &MatchSpec{Workload: &MatchWorkloadSpec{Guest: &MatchGuestSpec{GuestID: str(MatchNotContains, "ubuntu")}}}, false},
		{"guest family", &MatchSpec{Workload: &MatchWorkloadSpec{Guest: &MatchGuestSpec{GuestFamily: &GuestFamilyMatcherSpec{Value: "Windows"}}}}, false},
		{"or of nested", &MatchSpec{Op: MatchOpOr, Match: []MatchSpec{
			{Workload: &MatchWorkloadSpec{Kind: "Pod"}}, {Image: &MatchImageSpec{Name: str(MatchHasSuffix, "bcbea")}}}}, true},
		{"and of nested", &MatchSpec{Match: []MatchSpec{
			{Workload: &MatchWorkloadSpec{Kind: "Pod"}}, {Image: &MatchImageSpec{Name: str(MatchHasSuffix, "bcbea")}}}}, false},
		{"outer criteria and-ed with nested", &MatchSpec{Op: MatchOpOr, Workload: &MatchWorkloadSpec{Kind: "Pod"},
			Match: []MatchSpec{{Image: &MatchImageSpec{Name: str(MatchHasSuffix, "bcbea")}}}}, false},
	} {
		got, err := tc.match.Matches(ubuntu)
		if err != nil || got != tc.want {
			t.Errorf("%s: Matches = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}

	bad := &MatchSpec{Match: []MatchSpec{{Workload: &MatchWorkloadSpec{Guest: &MatchGuestSpec{GuestID: str(MatchRegexp, "(")}}}}}
	if _, err := bad.Matches(ubuntu); err == nil || !strings.Contains(err.Error(), "match[0]: workload.guest.guestID") {
		t.Errorf("bad regexp: err %v, want one naming match[0]: workload.guest.guestID", err)
	}
}
