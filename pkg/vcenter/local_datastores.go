package vcenter

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// LocalDatastore is a datastore only one host mounts: where instance storage lives.
type LocalDatastore struct {
	Ref      types.ManagedObjectReference
	Name     string
	Free     int64 // bytes
	Capacity int64 // bytes
}

// LocalDatastores returns the accessible, non-maintenance datastores each of the hosts mounts
// alone, most free space first. Placement chooses hosts by them and the storage service
// provisions instance volumes on them.
func LocalDatastores(ctx context.Context, c *vim25.Client, hosts []types.ManagedObjectReference) (map[types.ManagedObjectReference][]LocalDatastore, error) {
	out := map[types.ManagedObjectReference][]LocalDatastore{}
	if len(hosts) == 0 {
		return out, nil
	}
	pc := property.DefaultCollector(c)
	var hs []mo.HostSystem
	if err := pc.Retrieve(ctx, hosts, []string{"datastore"}, &hs); err != nil {
		return nil, fmt.Errorf("datastores of hosts: %w", err)
	}
	seen := map[types.ManagedObjectReference]bool{}
	var refs []types.ManagedObjectReference
	for _, h := range hs {
		for _, ds := range h.Datastore {
			if !seen[ds] {
				seen[ds] = true
				refs = append(refs, ds)
			}
		}
	}
	if len(refs) == 0 {
		return out, nil
	}
	var dss []mo.Datastore
	if err := pc.Retrieve(ctx, refs, []string{"name", "summary", "host"}, &dss); err != nil {
		return nil, fmt.Errorf("local datastores: %w", err)
	}
	for _, ds := range dss {
		s := ds.Summary
		usable := s.Accessible && (s.MaintenanceMode == "" || s.MaintenanceMode == string(types.DatastoreSummaryMaintenanceModeStateNormal))
		if len(ds.Host) != 1 || !usable {
			continue
		}
		host := ds.Host[0].Key
		out[host] = append(out[host], LocalDatastore{Ref: ds.Self, Name: ds.Name, Free: s.FreeSpace, Capacity: s.Capacity})
	}
	for h := range out {
		slices.SortFunc(out[h], func(a, b LocalDatastore) int {
			return cmp.Or(cmp.Compare(b.Free, a.Free), cmp.Compare(a.Name, b.Name))
		})
	}
	return out, nil
}
