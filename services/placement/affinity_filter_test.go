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
		{name: "a peer decided in zone-c without a host keeps zone-c's last free host", spec: antiHost, self: member,
			peers: []peer{{name: "x", labels: member, zone: "zone-c", host: "c1"}, {name: "y", labels: member, zone: "zone-c"}},
			want:  []string{"a1", "a2"}},
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
			got, err := affinity{self: tt.self, spec: tt.spec, peers: tt.peers}.filter(slices.Clone(all))
			if !errors.Is(err, tt.err) || !slices.Equal(hostNames(got), tt.want) {
				t.Errorf("hosts %v, err %v; want %v, %v", hostNames(got), err, tt.want, tt.err)
			}
		})
	}
}
