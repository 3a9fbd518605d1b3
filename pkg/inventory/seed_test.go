package inventory

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// inventory is what Seed builds, by name, as read back from vCenter.
type inventory struct {
	Clusters        map[string][]string // cluster → hosts
	Datastores      map[string][]string // datastore → hosts mounting it
	Networks        []string
	SwitchMembers   []string
	Items           map[string][]string // library → items
	ItemIDs         []string            // unchanged IDs: nothing was uploaded again
	Tags            map[string][]string // category → tags
	ClusterTags     map[string][]string // cluster → attached tags
	KeyProviders    []string
	DefaultProvider string
}

func TestSeedBuildsTopologyIdempotently(t *testing.T) {
	ctx := testContext(t)
	first := readInventory(ctx, t)

	want := inventory{
		Clusters:   map[string][]string{},
		Datastores: map[string][]string{},
		Items: map[string][]string{
			Library.Name:        {MultiDiskImage, MyImage, PhotonImage, PhotonISO, PhotonVMTX},
			ClusterLibrary.Name: {UbuntuImage, UbuntuISO},
		},
		Tags: map[string][]string{
			ZoneTagCategory:   {"zone-a", "zone-b", "zone-c"},
			PolicyTagCategory: {ComputePolicyName, DefaultComputePolicy},
		},
		ClusterTags:     map[string][]string{},
		KeyProviders:    []string{KeyProvider, OtherKeyProvider},
		DefaultProvider: KeyProvider,
	}
	var all []string
	for _, z := range Zones {
		want.Clusters[z.Cluster] = z.Hosts
		want.Datastores[z.Datastore] = z.Hosts
		want.ClusterTags[z.Cluster] = []string{z.Name}
		all = append(all, z.Hosts...)
	}
	slices.Sort(all)
	want.Datastores[SharedDatastore] = all
	for _, h := range InstanceStorageHosts {
		want.Datastores[LocalDatastore(h)] = []string{h}
	}
	want.SwitchMembers = all
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".Networks" || f == ".ItemIDs"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, first, ignore); diff != "" {
		t.Errorf("seeded inventory (-want +got):\n%s", diff)
	}
	for _, n := range Networks {
		if !slices.Contains(first.Networks, n.Name) {
			t.Errorf("network %q missing from %v", n.Name, first.Networks)
		}
	}
	if len(first.Clusters) != 3 || len(all) != 6 || len(first.Datastores) != 7 || len(first.ItemIDs) != 7 {
		t.Errorf("counts: %d clusters, %d hosts, %d datastores, %d items; want 3, 6, 7 (3 zones', the shared one, 3 hosts' own), 7",
			len(first.Clusters), len(all), len(first.Datastores), len(first.ItemIDs))
	}

	if err := Seed(ctx, seeded.client, seeded.sim.URL.User); err != nil {
		t.Fatalf("second seed: %v", err)
	}
	if diff := cmp.Diff(first, readInventory(ctx, t)); diff != "" {
		t.Errorf("second seed changed the inventory (-first +second):\n%s", diff)
	}
}

func TestDiscoverZones(t *testing.T) {
	ctx := testContext(t)
	zones, err := DiscoverZones(ctx, seeded.client, seeded.sim.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	clusterNames := objectNames(ctx, t, "ClusterComputeResource")
	got := make(map[string]string, len(zones))
	for zone, ref := range zones {
		got[zone] = clusterNames[ref]
	}
	want := make(map[string]string)
	for _, z := range Zones {
		want[z.Name] = z.Cluster
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zone → cluster (-want +got):\n%s", diff)
	}
}

func readInventory(ctx context.Context, t *testing.T) inventory {
	t.Helper()
	c := seeded.client
	inv := inventory{
		Clusters:    map[string][]string{},
		Datastores:  map[string][]string{},
		Items:       map[string][]string{},
		Tags:        map[string][]string{},
		ClusterTags: map[string][]string{},
	}
	clusterNames := objectNames(ctx, t, "ClusterComputeResource")
	hostNames := objectNames(ctx, t, "HostSystem")

	var hosts []mo.HostSystem
	retrieveAll(ctx, t, "HostSystem", []string{"name", "parent"}, &hosts)
	for _, h := range hosts {
		cluster := clusterNames[*h.Parent]
		inv.Clusters[cluster] = append(inv.Clusters[cluster], h.Name)
	}
	var dss []mo.Datastore
	retrieveAll(ctx, t, "Datastore", []string{"name", "host"}, &dss)
	for _, ds := range dss {
		for _, m := range ds.Host {
			inv.Datastores[ds.Name] = append(inv.Datastores[ds.Name], hostNames[m.Key])
		}
	}
	var networks []mo.Network
	retrieveAll(ctx, t, "Network", []string{"name"}, &networks)
	for _, n := range networks {
		inv.Networks = append(inv.Networks, n.Name)
	}
	var switches []mo.DistributedVirtualSwitch
	retrieveAll(ctx, t, "DistributedVirtualSwitch", []string{"name", "summary.hostMember"}, &switches)
	for _, sw := range switches {
		for _, h := range sw.Summary.HostMember {
			inv.SwitchMembers = append(inv.SwitchMembers, hostNames[h])
		}
	}

	rc, err := vapiSession(ctx, c, seeded.sim.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	defer closeVAPISession(rc)
	libs := library.NewManager(rc)
	all, err := libs.GetLibraries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		items, err := libs.GetLibraryItems(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			inv.Items[l.Name] = append(inv.Items[l.Name], it.Name)
			inv.ItemIDs = append(inv.ItemIDs, it.ID)
		}
	}
	tm := tags.NewManager(rc)
	cats, err := tm.GetCategories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tagNames := map[string]string{}
	for _, cat := range cats {
		ts, err := tm.GetTagsForCategory(ctx, cat.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range ts {
			inv.Tags[cat.Name] = append(inv.Tags[cat.Name], tag.Name)
			tagNames[tag.ID] = tag.Name
		}
	}
	for ref, name := range clusterNames {
		ids, err := tm.ListAttachedTags(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			inv.ClusterTags[name] = append(inv.ClusterTags[name], tagNames[id])
		}
	}

	kmip, err := crypto.GetManagerKmip(c.Client)
	if err != nil {
		t.Fatal(err)
	}
	providers, err := kmip.ListKmipServers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		inv.KeyProviders = append(inv.KeyProviders, p.ClusterId.Id)
		if p.UseAsDefault {
			inv.DefaultProvider = p.ClusterId.Id
		}
	}

	for _, m := range []map[string][]string{inv.Clusters, inv.Datastores, inv.Items, inv.Tags, inv.ClusterTags} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	for _, s := range [][]string{inv.Networks, inv.SwitchMembers, inv.ItemIDs, inv.KeyProviders} {
		slices.Sort(s)
	}
	return inv
}

// objectNames maps every managed object of the kind to its name.
func objectNames(ctx context.Context, t *testing.T, kind string) map[types.ManagedObjectReference]string {
	t.Helper()
	var objs []mo.ManagedEntity
	retrieveAll(ctx, t, kind, []string{"name"}, &objs)
	names := make(map[types.ManagedObjectReference]string, len(objs))
	for _, o := range objs {
		names[o.Self] = o.Name
	}
	return names
}

func retrieveAll(ctx context.Context, t *testing.T, kind string, props []string, dst any) {
	t.Helper()
	c := seeded.client
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{kind}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	if err := v.Retrieve(ctx, []string{kind}, props, dst); err != nil {
		t.Fatalf("retrieve %s: %v", kind, err)
	}
}
