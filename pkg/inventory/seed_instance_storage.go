package inventory

import (
	"context"
	"slices"

	"github.com/vmware/govmomi/property"
)

// InstanceStorageHosts have a datastore of their own (LocalDatastore), where the instance
// storage of a class (spec.hardware.instanceStorage) is created: the second host of each
// zone, so that every zone can take such a VM and placement has to choose the right host.
var InstanceStorageHosts = []string{"esx-a2", "esx-b2", "esx-c2"}

// LocalDatastore names the datastore only host mounts (vcsim gives it 1 TB).
func LocalDatastore(host string) string { return "ds-local-" + host }

// localDatastores mounts each instance-storage host's own datastore.
func (s *seeder) localDatastores(ctx context.Context) error {
	hosts := s.allHosts()
	mounted, err := mountedDatastores(ctx, property.DefaultCollector(s.c.Client), hosts)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		if !slices.Contains(InstanceStorageHosts, h.Name()) {
			continue
		}
		name := LocalDatastore(h.Name())
		if slices.Contains(mounted[h.Reference()], name) {
			continue
		}
		if err := s.mountLocalDatastore(ctx, h, name); err != nil {
			return err
		}
	}
	return nil
}
