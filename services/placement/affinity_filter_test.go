package placement

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

func filterHosts(names ...string) []hostCapacity {
	var out []hostCapacity
	for _, n := range names {
		out = append(out, hostCapacity{name: n, zone: "zone-" + n[:1]})
	}
	return out
}

func hostNames(hs []hostCapacity) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.name)
	}
	return out
}

func groupTerm(topologyKey string) []model.VMAffinityTerm {
	return []model.VMAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"g": "1"}}, TopologyKey: topologyKey}}
}

// The candidate filter of affinity terms against peers placed, decided with their group
// (zone, no host yet) or not placed.
func TestAffinityFilter(t *testing.T) {
	member := map[string]string{"g": "1"}
	all := filterHosts("a1", "a2", "c1", "c2")
	antiHost := &model.AffinitySpec{VMAntiAffinity: &model.VMAntiAffinitySpec{RequiredDuringSchedulingPreferredDuringExecution: groupTerm(model.TopologyKeyHostname)}}
	antiHostPreferred := &model.AffinitySpec{VMAntiAffinity: &model.VMAntiAffinitySpec{PreferredDuringSchedulingPreferredDuringExecution: groupTerm(model.TopologyKeyHostname)}}
	zoneAffinityPreferred := &model.AffinitySpec{VMAffinity: &model.VMAffinitySpec{PreferredDuringSchedulingPreferredDuringExecution: groupTerm(model.TopologyKeyZone)}}
	tests := []struct {
		name  string
		spec  *model.AffinitySpec
		self  map[string]string
		peers []peer
		want  []string
		err   error
	}{
		{name: "anti-affinity off the hosts taken", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1"}}, want: []string{"a1", "a2", "c2"}},
		{name: "a peer decided with its group in zone-c without a host keeps zone-c's last free host", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1"}, {name: "y", labels: member, zone: "zone-c", groupName: "g"}},
			want:  []string{"a1", "a2"}},
		{name: "so does a peer labelled zone-c that comes before this VM", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1"}, {name: "a", labels: member, zone: "zone-c"}},
			want:  []string{"a1", "a2"}},
		{name: "not one that comes after it", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1"}, {name: "y", labels: member, zone: "zone-c"}},
			want:  []string{"a1", "a2", "c2"}},
		{name: "every host taken", spec: antiHost, self: member,
			peers: []peer{{name: "w", labels: member, zone: "zone-a", host: "a1"}, {name: "x", labels: member, zone: "zone-a", host: "a2"},
				{name: "y", labels: member, zone: "zone-c", host: "c1"}, {name: "z", labels: member, zone: "zone-c", host: "c2"}},
			err: errAffinityUnsatisfiable},
		{name: "a VM selected by another's required anti-affinity stays off its host", self: member,
			peers: []peer{{name: "x", labels: map[string]string{"other": "1"}, affinity: antiHost, zone: "zone-a", host: "a2"}},
			want:  []string{"a1", "c1", "c2"}},
		{name: "preferred anti-affinity where possible", spec: antiHostPreferred, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-a", host: "a1"}}, want: []string{"a2", "c1", "c2"}},
		{name: "preferred zone affinity", spec: zoneAffinityPreferred, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c2"}}, want: []string{"c1", "c2"}},
		{name: "a deleting peer counts for nothing", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1", deleting: true}}, want: []string{"a1", "a2", "c1", "c2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := affinity{self: tt.self, spec: tt.spec, peers: tt.peers, name: "vm"}.filter(slices.Clone(all))
			if !errors.Is(err, tt.err) || !slices.Equal(hostNames(got), tt.want) {
				t.Errorf("hosts %v, err %v; want %v, %v", hostNames(got), err, tt.want, tt.err)
			}
		})
	}
}

// Three VMs kept apart by host, labelled at once into a zone of two hosts: the first two
// by name take the hosts, the third cannot be placed. Without an order each kept both
// hosts for the other two, and none was placed.
func TestAffinityFilterOrdersVMsWaitingForHosts(t *testing.T) {
	hosts := filterHosts("a1", "a2")
	vms := []peer{waitingApart("vm-a", ""), waitingApart("vm-b", ""), waitingApart("vm-c", "")}
	filter := func(i int) ([]string, error) {
		others := slices.Delete(slices.Clone(vms), i, i+1)
		got, err := affinityFilters(vms[i], others)[0](slices.Clone(hosts))
		return hostNames(got), err
	}
	for _, want := range []struct {
		vm    int
		hosts []string
		err   error
	}{
		{0, []string{"a1", "a2"}, nil},
		{1, []string{"a1", "a2"}, nil}, // vm-a will take one, and one is left
		{2, nil, errAffinityUnsatisfiable},
	} {
		if got, err := filter(want.vm); !slices.Equal(got, want.hosts) || !errors.Is(err, want.err) {
			t.Errorf("%s waiting with the others: hosts %v, err %v; want %v, %v", vms[want.vm].name, got, err, want.hosts, want.err)
		}
	}
	vms[0].host = "a1"
	if got, err := filter(1); !slices.Equal(got, []string{"a2"}) || err != nil {
		t.Errorf("vm-b once vm-a is on a1: hosts %v, err %v; want [a2]", got, err)
	}
	vms[1].host = "a2"
	if _, err := filter(2); !errors.Is(err, errAffinityUnsatisfiable) {
		t.Errorf("vm-c once both hosts are taken: err %v, want %v", err, errAffinityUnsatisfiable)
	}
}

// The claims of VMs waiting for a host are one order, the same from either VM: of two
// waiting for a zone's last free host, exactly one keeps it for the other, in a group
// or not.
func TestAffinityFilterClaimsAreOneOrder(t *testing.T) {
	hosts := filterHosts("a1", "a2")
	third := waitingApart("vm-x", "")
	third.host = "a1"
	for _, groups := range [][2]string{{"", ""}, {"", "g"}, {"g", ""}, {"g", "g"}, {"g", "h"}, {"h", "g"}} {
		a, b := waitingApart("vm-a", groups[0]), waitingApart("vm-b", groups[1])
		forA, _ := affinityFilters(a, []peer{b, third})[0](slices.Clone(hosts))
		forB, _ := affinityFilters(b, []peer{a, third})[0](slices.Clone(hosts))
		if len(forA)+len(forB) != 1 {
			t.Errorf("vm-a in group %q, vm-b in group %q: vm-a may take %v, vm-b %v; want exactly one of them to take a2",
				groups[0], groups[1], hostNames(forA), hostNames(forB))
		}
	}
}

// waitingApart is a VM of group (or none) in zone-a, not yet on a host, with required host
// anti-affinity to the VMs labelled g=1, as it is.
func waitingApart(name, group string) peer {
	antiHost := &model.AffinitySpec{VMAntiAffinity: &model.VMAntiAffinitySpec{RequiredDuringSchedulingPreferredDuringExecution: groupTerm(model.TopologyKeyHostname)}}
	return peer{name: name, labels: map[string]string{"g": "1"}, affinity: antiHost, zone: "zone-a", groupName: group}
}
