package placement

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestChooseHost(t *testing.T) {
	host := func(name string, cpuUsed, memUsed int64, vms int, usable bool) hostCapacity {
		return hostCapacity{name: name, cpuTotal: 4000, cpuUsed: cpuUsed, memTotal: 8192, memUsed: memUsed, vms: vms, usable: usable}
	}
	tests := []struct {
		name  string
		hosts []hostCapacity
		want  string // "" when none qualifies
	}{
		{"most free share of the scarcer resource", []hostCapacity{
			host("a", 1000, 6000, 0, true), // memory 27% free
			host("b", 3000, 1000, 0, true), // CPU 25% free
			host("c", 2000, 4096, 0, true), // 50% free
		}, "c"},
		{"ties go to fewer VMs, then by name", []hostCapacity{
			host("b", 0, 0, 3, true), host("c", 0, 0, 1, true), host("a", 0, 0, 1, true),
		}, "a"},
		{"hosts in maintenance or disconnected do not qualify", []hostCapacity{
			host("a", 0, 0, 0, false), host("b", 3900, 0, 9, true),
		}, "b"},
		{"a full host does not qualify", []hostCapacity{host("a", 4000, 0, 0, true)}, ""},
		{"no hosts", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := chooseHost(tc.hosts)
			if got.name != tc.want || ok != (tc.want != "") {
				t.Errorf("chooseHost = %q, %v; want %q", got.name, ok, tc.want)
			}
		})
	}
}

func TestChooseDatastore(t *testing.T) {
	ds := func(name string, free int64, usable bool) datastoreCapacity {
		return datastoreCapacity{ref: types.ManagedObjectReference{Type: "Datastore", Value: name}, name: name, free: free, capacity: 1 << 40, usable: usable}
	}
	tests := []struct {
		name string
		dss  []datastoreCapacity
		want string
	}{
		{"most free bytes", []datastoreCapacity{ds("a", 10, true), ds("b", 30, true), ds("c", 20, true)}, "b"},
		{"ties by name", []datastoreCapacity{ds("b", 10, true), ds("a", 10, true)}, "a"},
		{"inaccessible or full ones do not qualify", []datastoreCapacity{ds("a", 90, false), ds("b", 0, true), ds("c", 1, true)}, "c"},
		{"none", []datastoreCapacity{ds("a", 0, true)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := chooseDatastore(tc.dss)
			if got.name != tc.want || ok != (tc.want != "") {
				t.Errorf("chooseDatastore = %q, %v; want %q", got.name, ok, tc.want)
			}
		})
	}
}
