package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// decide asks vCenter where among hosts (every one of them able to take the VM, with
// storageOf its best compatible datastore) the VM goes: PlaceVmsXCluster chooses among the
// zones' clusters, the cluster's PlaceVm the host and datastore. One candidate left is
// implied placement. vCenter is asked only among hosts the filters kept, so its answer
// holds whatever vCenter's own logic knows (vcsim's answers are random, notes/vcsim.md §2).
func (r *reconciler) decide(ctx context.Context, t *topology, hosts []hostCapacity, storageOf map[string]datastoreCapacity, policy storagePolicy) (choice, error) {
	pick := func(h hostCapacity, how string) choice {
		return choice{zone: t.zones[h.zone], host: h, datastore: storageOf[h.ref.Value], policy: policy, how: how}
	}
	if len(hosts) == 1 {
		return pick(hosts[0], "implied: the only candidate host"), nil
	}
	zoneNames := zonesOf(hosts)
	zoneHow := "implied: the only candidate zone"
	if len(zoneNames) > 1 {
		z, err := r.placeXCluster(ctx, t, zoneNames)
		if err != nil {
			return choice{}, err
		}
		hosts = slices.DeleteFunc(slices.Clone(hosts), func(h hostCapacity) bool { return h.zone != z })
		zoneHow = fmt.Sprintf("PlaceVmsXCluster among zones %s", strings.Join(zoneNames, ", "))
		if len(hosts) == 1 {
			return pick(hosts[0], zoneHow+"; implied: the zone's only candidate host"), nil
		}
	}
	z := t.zones[hosts[0].zone]
	if len(hosts) < len(z.hosts) {
		// PlaceVm restricted to some hosts is what vCenter offers, but vcsim panics on it
		// (and keeps the cluster locked): among a subset, the host with the most room.
		h, _ := chooseHost(hosts)
		return pick(h, zoneHow+fmt.Sprintf("; host with the most room among the %d of %d that may take it", len(hosts), len(z.hosts))), nil
	}
	hostRef, dsRef, err := r.placeInCluster(ctx, z)
	if err != nil {
		return choice{}, err
	}
	i := slices.IndexFunc(hosts, func(h hostCapacity) bool { return h.ref == hostRef })
	if i < 0 {
		return choice{}, fmt.Errorf("PlaceVm in cluster %s of zone %s recommended host %s, not one of the cluster's", z.cluster.Value, z.name, hostRef.Value)
	}
	ch := pick(hosts[i], zoneHow+"; PlaceVm in the zone's cluster")
	if ds, ok := compatibleMounted(hosts[i], dsRef, storageOf); ok {
		ch.datastore = ds
	}
	return ch, nil
}

// zonesOf are the distinct zones of hosts, sorted.
func zonesOf(hosts []hostCapacity) []string {
	var out []string
	for _, h := range hosts {
		out = append(out, h.zone)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// compatibleMounted is the datastore vCenter recommended when the host mounts it and it
// suits the policy (storageOf's choice for that host is the only one placement knows to
// suit, so only that one qualifies); vcsim recommends any datastore of the cluster.
func compatibleMounted(h hostCapacity, ds types.ManagedObjectReference, storageOf map[string]datastoreCapacity) (datastoreCapacity, bool) {
	best, ok := storageOf[h.ref.Value]
	return best, ok && best.ref == ds
}

// placementSpecName is the name PlaceVmsXCluster requires of the VM it places.
const placementSpecName = "vmop-placement"

// placeXCluster asks vCenter which of the zones' clusters takes the VM.
func (r *reconciler) placeXCluster(ctx context.Context, t *topology, zoneNames []string) (string, error) {
	pools := make([]types.ManagedObjectReference, 0, len(zoneNames))
	for _, n := range zoneNames {
		pools = append(pools, t.zones[n].pool)
	}
	var res *types.PlaceVmsXClusterResult
	err := traced(ctx, spanPlaceXCluster, func(ctx context.Context) error {
		var err error
		res, err = object.NewRootFolder(r.vc.c.Client).PlaceVmsXCluster(ctx, types.PlaceVmsXClusterSpec{
			ResourcePools: pools,
			VmPlacementSpecs: []types.PlaceVmsXClusterSpecVmPlacementSpec{
				{ConfigSpec: types.VirtualMachineConfigSpec{Name: placementSpecName}}},
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("PlaceVmsXCluster among zones %s: %w", strings.Join(zoneNames, ", "), err)
	}
	for _, f := range res.Faults {
		return "", fmt.Errorf("PlaceVmsXCluster among zones %s: %s", strings.Join(zoneNames, ", "), faultText(f.Faults))
	}
	for _, info := range res.PlacementInfos {
		for _, a := range info.Recommendation.Action {
			if ip, ok := a.(*types.ClusterClusterInitialPlacementAction); ok {
				if z, ok := t.poolZone[ip.Pool]; ok && slices.Contains(zoneNames, z) {
					return z, nil
				}
			}
		}
	}
	return "", fmt.Errorf("PlaceVmsXCluster among zones %s recommended none of them", strings.Join(zoneNames, ", "))
}

// placeInCluster asks the zone's cluster for a host and a datastore.
func (r *reconciler) placeInCluster(ctx context.Context, z zone) (host, datastore types.ManagedObjectReference, err error) {
	var res *types.PlacementResult
	err = traced(ctx, spanPlaceVM, func(ctx context.Context) error {
		var err error
		res, err = object.NewClusterComputeResource(r.vc.c.Client, z.cluster).PlaceVm(ctx, types.PlacementSpec{
			PlacementType: string(types.PlacementSpecPlacementTypeCreate),
			ConfigSpec:    &types.VirtualMachineConfigSpec{Name: placementSpecName},
		})
		return err
	})
	if err != nil {
		return host, datastore, fmt.Errorf("PlaceVm in cluster of zone %s: %w", z.name, err)
	}
	for _, rec := range res.Recommendations {
		for _, a := range rec.Action {
			if pa, ok := a.(*types.PlacementAction); ok && pa.TargetHost != nil {
				if pa.RelocateSpec != nil && pa.RelocateSpec.Datastore != nil {
					datastore = *pa.RelocateSpec.Datastore
				}
				return *pa.TargetHost, datastore, nil
			}
		}
	}
	return host, datastore, fmt.Errorf("PlaceVm in cluster of zone %s recommended no host", z.name)
}

// faultText is the messages of placement faults.
func faultText(fs []types.LocalizedMethodFault) string {
	var out []string
	for _, f := range fs {
		msg := f.LocalizedMessage
		if msg == "" {
			msg = fmt.Sprintf("%T", f.Fault)
		}
		out = append(out, msg)
	}
	return strings.Join(out, "; ")
}
