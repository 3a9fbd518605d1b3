package inventory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// vcsimHomeOption is the setting under which vcsim publishes its temp directory; a real vCenter
// has no such setting.
const vcsimHomeOption = "vcsim.home"

// datastores mounts each zone's datastore on the zone's hosts and SharedDatastore on every host.
func (s *seeder) datastores(ctx context.Context) error {
	want := make(map[*object.HostSystem][]string)
	for _, z := range Zones {
		for _, h := range s.hosts[z.Name] {
			want[h] = []string{z.Datastore, SharedDatastore}
		}
	}
	mounted, err := mountedDatastores(ctx, property.DefaultCollector(s.c.Client), s.allHosts())
	if err != nil {
		return err
	}
	for _, h := range s.allHosts() {
		for _, ds := range want[h] {
			if slices.Contains(mounted[h.Reference()], ds) {
				continue
			}
			if err := s.mountLocalDatastore(ctx, h, ds); err != nil {
				return err
			}
		}
	}
	return nil
}

// mountedDatastores returns the datastore names each host mounts.
func mountedDatastores(ctx context.Context, c *property.Collector, hosts []*object.HostSystem) (map[types.ManagedObjectReference][]string, error) {
	refs := make([]types.ManagedObjectReference, len(hosts))
	for i, h := range hosts {
		refs[i] = h.Reference()
	}
	var hs []mo.HostSystem
	if err := c.Retrieve(ctx, refs, []string{"datastore"}, &hs); err != nil {
		return nil, fmt.Errorf("datastores of hosts: %w", err)
	}
	var dsRefs []types.ManagedObjectReference
	for _, h := range hs {
		dsRefs = append(dsRefs, h.Datastore...)
	}
	names := make(map[types.ManagedObjectReference]string)
	if len(dsRefs) > 0 {
		var dss []mo.Datastore
		if err := c.Retrieve(ctx, dsRefs, []string{"name"}, &dss); err != nil {
			return nil, fmt.Errorf("names of datastores: %w", err)
		}
		for _, ds := range dss {
			names[ds.Self] = ds.Name
		}
	}
	mounted := make(map[types.ManagedObjectReference][]string, len(hs))
	for _, h := range hs {
		for _, ref := range h.Datastore {
			mounted[h.Self] = append(mounted[h.Self], names[ref])
		}
	}
	return mounted, nil
}

// mountLocalDatastore backs the datastore with a directory under vcsim's home; vcsim shares one
// "local" datastore between every host that mounts the same name.
func (s *seeder) mountLocalDatastore(ctx context.Context, h *object.HostSystem, name string) error {
	home, err := s.vcsimHome(ctx)
	if err != nil {
		return fmt.Errorf("datastore %s missing on host %s: %w", name, h.Name(), err)
	}
	dir := filepath.Join(home, "vmop-"+name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("datastore %s directory: %w", name, err)
	}
	dss, err := h.ConfigManager().DatastoreSystem(ctx)
	if err != nil {
		return fmt.Errorf("datastore system of host %s: %w", h.Name(), err)
	}
	if _, err := dss.CreateLocalDatastore(ctx, name, dir); err != nil {
		return fmt.Errorf("mount datastore %s on host %s: %w", name, h.Name(), err)
	}
	return nil
}

// vcsimHome returns vcsim's temp directory, which must be on this machine: datastores can only be
// created when Seed runs next to the simulator.
func (s *seeder) vcsimHome(ctx context.Context) (string, error) {
	opts, err := object.NewOptionManager(s.c.Client, *s.c.ServiceContent.Setting).Query(ctx, vcsimHomeOption)
	if err != nil || len(opts) == 0 {
		return "", fmt.Errorf("cannot create datastores: not vcsim (no %s setting)", vcsimHomeOption)
	}
	home, _ := opts[0].GetOptionValue().Value.(string)
	if _, err := os.Stat(home); err != nil {
		return "", fmt.Errorf("cannot create datastores: vcsim home %q is not on this machine: %w", home, err)
	}
	return home, nil
}
