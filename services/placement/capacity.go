package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// errNoCapacity: no host (or none of its datastores) can take the VM; a condition says so.
var errNoCapacity = errors.New("no capacity")

// hostCapacity is what vCenter says about a host's room for one more VM.
type hostCapacity struct {
	ref               types.ManagedObjectReference
	name, zone        string
	coreMHz           int64 // clock of one core: policies ask for CPU in cores
	cpuTotal, cpuUsed int64 // MHz
	memTotal, memUsed int64 // MB
	vms               int
	usable            bool // connected and not in maintenance mode
	datastores        []types.ManagedObjectReference
}

// free is the free share of the host's scarcer resource, CPU or memory.
func (h hostCapacity) free() float64 {
	share := func(used, total int64) float64 {
		if total <= 0 {
			return 0
		}
		return float64(total-used) / float64(total)
	}
	return min(share(h.cpuUsed, h.cpuTotal), share(h.memUsed, h.memTotal))
}

// datastoreCapacity is a datastore's free space.
type datastoreCapacity struct {
	ref            types.ManagedObjectReference
	name           string
	free, capacity int64 // bytes
	usable         bool  // accessible and not in maintenance mode
}

// chooseHost picks the usable host with the largest free share of its scarcer resource;
// ties (vcsim reports no usage at all, notes P2) go to the host running fewer VMs, then by
// name, so equal hosts fill evenly and the choice is deterministic.
func chooseHost(hosts []hostCapacity) (hostCapacity, bool) {
	usable := roomy(hosts)
	if len(usable) == 0 {
		return hostCapacity{}, false
	}
	return slices.MinFunc(usable, func(a, b hostCapacity) int {
		if fa, fb := a.free(), b.free(); fa != fb {
			return cmp.Compare(fb, fa)
		}
		if a.vms != b.vms {
			return cmp.Compare(a.vms, b.vms)
		}
		return strings.Compare(a.name, b.name)
	}), true
}

// roomy are the usable hosts with free CPU and memory.
func roomy(hosts []hostCapacity) []hostCapacity {
	var out []hostCapacity
	for _, h := range hosts {
		if h.usable && h.free() > 0 {
			out = append(out, h)
		}
	}
	return out
}

// chooseDatastore picks the usable datastore with the most free bytes, ties by name.
func chooseDatastore(dss []datastoreCapacity) (datastoreCapacity, bool) {
	var usable []datastoreCapacity
	for _, ds := range dss {
		if ds.usable && ds.free > 0 {
			usable = append(usable, ds)
		}
	}
	if len(usable) == 0 {
		return datastoreCapacity{}, false
	}
	return slices.MinFunc(usable, func(a, b datastoreCapacity) int {
		if a.free != b.free {
			return cmp.Compare(b.free, a.free)
		}
		return strings.Compare(a.name, b.name)
	}), true
}

// choice is where a VM goes: one zone's cluster (its root resource pool), a host and a
// datastore of that host compatible with the VM's storage policy; how says who decided.
type choice struct {
	zone      zone
	host      hostCapacity
	datastore datastoreCapacity
	policy    storagePolicy
	how       string
}

// room is what vCenter says of the hosts of every zone and their datastores, and which
// datastores suit the VM's storage policy. Nothing in it waits for the namespace's other
// decisions, so a decision reads it before it holds the namespace.
type room struct {
	hosts      []hostCapacity
	datastores []datastoreCapacity
	compatible map[types.ManagedObjectReference]bool
	policy     storagePolicy
}

// readRoom reads the capacity of every zone's hosts and of their datastores, and asks PBM
// which datastores suit the policy.
func (r *reconciler) readRoom(ctx context.Context, t *topology, policy storagePolicy) (room, error) {
	rm := room{policy: policy, compatible: map[types.ManagedObjectReference]bool{}}
	err := traced(ctx, spanCapacity, func(ctx context.Context) error {
		var err error
		if rm.hosts, rm.datastores, err = r.readCapacity(ctx, t, t.names); err != nil {
			return err
		}
		compatible, err := r.compatibleDatastores(ctx, policy, rm.datastores)
		for _, ds := range compatible {
			rm.compatible[ds.ref] = true
		}
		return err
	})
	return rm, err
}

// place narrows the hosts of the given zones (of rm) to those with the instance storage the
// VM needs and by the filters (affinity, ...) and lets vCenter decide among those left
// (decide); errNoCapacity or errNoCompatibleDatastore when nothing qualifies, a filter's
// error when it leaves nothing.
func (r *reconciler) place(ctx context.Context, t *topology, rm room, zoneNames []string, need instanceNeed, filters ...hostFilter) (choice, error) {
	hosts := slices.DeleteFunc(slices.Clone(rm.hosts), func(h hostCapacity) bool { return !slices.Contains(zoneNames, h.zone) })
	hosts, err := r.withInstanceStorage(ctx, hosts, need)
	if err != nil {
		return choice{}, err
	}
	var mountedAny, compatible []datastoreCapacity
	for _, ds := range rm.datastores {
		if slices.ContainsFunc(hosts, func(h hostCapacity) bool { return slices.Contains(h.datastores, ds.ref) }) {
			mountedAny = append(mountedAny, ds)
			if rm.compatible[ds.ref] {
				compatible = append(compatible, ds)
			}
		}
	}
	if len(compatible) == 0 {
		return choice{}, fmt.Errorf("%w: PBM calls none of the %d datastores of zone(s) %s compatible with %s",
			errNoCompatibleDatastore, len(mountedAny), strings.Join(zoneNames, ", "), rm.policy)
	}
	// Only hosts that mount a usable compatible datastore can take the VM.
	var withStorage []hostCapacity
	storageOf := map[string]datastoreCapacity{}
	for _, h := range hosts {
		var mounted []datastoreCapacity
		for _, ds := range compatible {
			if slices.Contains(h.datastores, ds.ref) {
				mounted = append(mounted, ds)
			}
		}
		if ds, ok := chooseDatastore(mounted); ok {
			withStorage = append(withStorage, h)
			storageOf[h.ref.Value] = ds
		}
	}
	if len(withStorage) == 0 {
		return choice{}, fmt.Errorf("%w: no host of zone(s) %s mounts an accessible datastore with free space compatible with %s",
			errNoCapacity, strings.Join(zoneNames, ", "), rm.policy)
	}
	usable := roomy(withStorage)
	if len(usable) == 0 {
		return choice{}, fmt.Errorf("%w: none of the %d hosts of zone(s) %s with a datastore for %s is connected, out of maintenance and has free CPU and memory",
			errNoCapacity, len(withStorage), strings.Join(zoneNames, ", "), rm.policy)
	}
	for _, f := range filters {
		if usable, err = f(usable); err != nil {
			return choice{}, err
		}
	}
	return r.decide(ctx, t, usable, storageOf, rm.policy)
}

func (r *reconciler) readCapacity(ctx context.Context, t *topology, zoneNames []string) ([]hostCapacity, []datastoreCapacity, error) {
	zoneOf := map[types.ManagedObjectReference]string{}
	var refs []types.ManagedObjectReference
	for _, name := range zoneNames {
		for _, h := range t.zones[name].hosts {
			zoneOf[h] = name
			refs = append(refs, h)
		}
	}
	if len(refs) == 0 {
		return nil, nil, nil
	}
	pc := property.DefaultCollector(r.vc.c.Client)
	var hs []mo.HostSystem
	if err := pc.Retrieve(ctx, refs, []string{"name", "summary.hardware", "summary.quickStats",
		"runtime.connectionState", "runtime.inMaintenanceMode", "datastore", "vm"}, &hs); err != nil {
		return nil, nil, fmt.Errorf("host capacity: %w", err)
	}
	hosts := make([]hostCapacity, 0, len(hs))
	dsSet := map[types.ManagedObjectReference]bool{}
	for _, h := range hs {
		hc := hostCapacity{ref: h.Self, name: h.Name, zone: zoneOf[h.Self], vms: len(h.Vm), datastores: h.Datastore,
			usable:  h.Runtime.ConnectionState == types.HostSystemConnectionStateConnected && !h.Runtime.InMaintenanceMode,
			cpuUsed: int64(h.Summary.QuickStats.OverallCpuUsage), memUsed: int64(h.Summary.QuickStats.OverallMemoryUsage)}
		if hw := h.Summary.Hardware; hw != nil {
			hc.coreMHz = int64(hw.CpuMhz)
			hc.cpuTotal = int64(hw.CpuMhz) * int64(hw.NumCpuCores)
			hc.memTotal = hw.MemorySize >> 20
		}
		hosts = append(hosts, hc)
		for _, ds := range h.Datastore {
			dsSet[ds] = true
		}
	}
	if len(dsSet) == 0 {
		return hosts, nil, nil
	}
	dsRefs := make([]types.ManagedObjectReference, 0, len(dsSet))
	for ref := range dsSet {
		dsRefs = append(dsRefs, ref)
	}
	var dss []mo.Datastore
	if err := pc.Retrieve(ctx, dsRefs, []string{"name", "summary"}, &dss); err != nil {
		return nil, nil, fmt.Errorf("datastore capacity: %w", err)
	}
	datastores := make([]datastoreCapacity, 0, len(dss))
	for _, ds := range dss {
		s := ds.Summary
		datastores = append(datastores, datastoreCapacity{ref: ds.Self, name: ds.Name, free: s.FreeSpace, capacity: s.Capacity,
			usable: s.Accessible && (s.MaintenanceMode == "" || s.MaintenanceMode == string(types.DatastoreSummaryMaintenanceModeStateNormal))})
	}
	return hosts, datastores, nil
}
