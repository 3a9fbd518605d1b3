package deploytest

import (
	"context"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/inventory"
)

// Finder finds the seeded datacenter and returns it with a finder set to it, for looking
// up the inventory's pools, datastores and hosts by name.
func (e *Env) Finder(ctx context.Context) (*find.Finder, *object.Datacenter, error) {
	finder := find.NewFinder(e.Client.Client)
	dc, err := finder.Datacenter(ctx, inventory.Datacenter)
	if err != nil {
		return nil, nil, err
	}
	return finder.SetDatacenter(dc), dc, nil
}
