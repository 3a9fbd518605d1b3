package inventory

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/rest"
)

// Seed builds the topology of topology.go in the vCenter behind c, creating only what is missing:
// running it again changes nothing. login is needed for the vAPI endpoints (tags, content library,
// key providers).
//
// Hosts and datastores can only be created in vcsim (a real vCenter needs real ESXi hosts and
// storage); against a vCenter that already holds them, Seed only verifies them.
func Seed(ctx context.Context, c *govmomi.Client, login *url.Userinfo) error {
	rc, err := vapiSession(ctx, c, login)
	if err != nil {
		return fmt.Errorf("seed inventory: %w", err)
	}
	defer closeVAPISession(rc)

	s := &seeder{c: c, rest: rc, finder: find.NewFinder(c.Client, false)}
	steps := []func(context.Context) error{
		s.datacenter,
		s.zones,
		s.datastores,
		s.localDatastores,
		s.networks,
		s.zoneTags,
		s.policyTags,
		s.keyProviders,
		s.templates, // before the libraries: VM template items are made of them
		s.libraries,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return fmt.Errorf("seed inventory: %w", err)
		}
	}
	return nil
}

// seeder carries what the steps of Seed find or create for the later steps.
type seeder struct {
	c      *govmomi.Client
	rest   *rest.Client
	finder *find.Finder

	dc       *object.Datacenter
	folders  *object.DatacenterFolders
	clusters map[string]*object.ClusterComputeResource // by zone name
	hosts    map[string][]*object.HostSystem           // by zone name
}

// allHosts lists the hosts of every zone, in Zones order.
func (s *seeder) allHosts() []*object.HostSystem {
	var all []*object.HostSystem
	for _, z := range Zones {
		all = append(all, s.hosts[z.Name]...)
	}
	return all
}
