package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
)

// zone is an availability zone: a cluster tagged in the zone category (inventory.Zones).
type zone struct {
	name    string
	cluster types.ManagedObjectReference
	pool    types.ManagedObjectReference // the cluster's root resource pool
	hosts   []types.ManagedObjectReference
}

// topology is the static part of the inventory placement needs, read from vCenter by name
// (never hard-coded morefs): the datacenter, its VM folder, the zones and their hosts.
type topology struct {
	vmFolder *object.Folder
	zones    map[string]zone // by zone name
	names    []string        // zone names, sorted
	poolZone map[types.ManagedObjectReference]string
	hostName map[types.ManagedObjectReference]string
}

// topologyCache loads the topology when first needed, again on demand (a label naming a
// zone it does not know) and after topologyTTL, so hosts and zones added later are used.
type topologyCache struct {
	mu     sync.Mutex
	t      *topology
	loaded time.Time
}

const topologyTTL = 5 * time.Minute

func (r *reconciler) topology(ctx context.Context, reload bool) (*topology, error) {
	r.topo.mu.Lock()
	defer r.topo.mu.Unlock()
	if r.topo.t != nil && !reload && time.Since(r.topo.loaded) < topologyTTL {
		return r.topo.t, nil
	}
	var t *topology
	err := traced(ctx, spanTopology, func(ctx context.Context) error {
		var err error
		t, err = r.loadTopology(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.topo.t, r.topo.loaded = t, time.Now()
	return t, nil
}

func (r *reconciler) loadTopology(ctx context.Context) (*topology, error) {
	c := r.vc.c.Client
	dc, err := find.NewFinder(c).Datacenter(ctx, inventory.Datacenter)
	if err != nil {
		return nil, fmt.Errorf("datacenter %s: %w", inventory.Datacenter, err)
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		return nil, fmt.Errorf("folders of %s: %w", inventory.Datacenter, err)
	}
	clusters, err := inventory.DiscoverZones(ctx, r.vc.c, r.vc.login)
	if err != nil {
		return nil, err
	}
	if len(clusters) == 0 {
		return nil, errors.New("no zones in vCenter (no tags in category " + inventory.ZoneTagCategory + ")")
	}
	t := &topology{vmFolder: folders.VmFolder, zones: map[string]zone{},
		poolZone: map[types.ManagedObjectReference]string{}, hostName: map[types.ManagedObjectReference]string{}}
	var refs []types.ManagedObjectReference
	byCluster := map[types.ManagedObjectReference]string{}
	for name, ref := range clusters {
		refs = append(refs, ref)
		byCluster[ref] = name
	}
	pc := property.DefaultCollector(c)
	var ccs []mo.ClusterComputeResource
	if err := pc.Retrieve(ctx, refs, []string{"host", "resourcePool"}, &ccs); err != nil {
		return nil, fmt.Errorf("zone clusters: %w", err)
	}
	var hosts []types.ManagedObjectReference
	for _, cc := range ccs {
		if cc.ResourcePool == nil {
			return nil, fmt.Errorf("cluster of zone %s has no resource pool", byCluster[cc.Self])
		}
		z := zone{name: byCluster[cc.Self], cluster: cc.Self, pool: *cc.ResourcePool, hosts: cc.Host}
		t.zones[z.name] = z
		t.names = append(t.names, z.name)
		t.poolZone[z.pool] = z.name
		hosts = append(hosts, cc.Host...)
	}
	slices.Sort(t.names)
	if len(hosts) > 0 {
		var hs []mo.HostSystem
		if err := pc.Retrieve(ctx, hosts, []string{"name"}, &hs); err != nil {
			return nil, fmt.Errorf("zone hosts: %w", err)
		}
		for _, h := range hs {
			t.hostName[h.Self] = h.Name
		}
	}
	return t, nil
}
