package inventory

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/types"
)

// DiscoverZones reads the zones from vCenter: each tag of ZoneTagCategory names a zone, and the
// cluster it is attached to is the zone's cluster. Zones whose tag is attached to anything but
// exactly one cluster are an error, since placement could not tell where they are.
func DiscoverZones(ctx context.Context, c *govmomi.Client, login *url.Userinfo) (map[string]types.ManagedObjectReference, error) {
	rc, err := vapiSession(ctx, c, login)
	if err != nil {
		return nil, fmt.Errorf("discover zones: %w", err)
	}
	defer closeVAPISession(rc)

	m := tags.NewManager(rc)
	cat, err := m.GetCategory(ctx, ZoneTagCategory)
	if err != nil {
		return nil, fmt.Errorf("discover zones: tag category %s: %w", ZoneTagCategory, err)
	}
	zoneTags, err := m.GetTagsForCategory(ctx, cat.ID)
	if err != nil {
		return nil, fmt.Errorf("discover zones: tags of %s: %w", ZoneTagCategory, err)
	}
	zones := make(map[string]types.ManagedObjectReference, len(zoneTags))
	for _, t := range zoneTags {
		objs, err := m.ListAttachedObjects(ctx, t.ID)
		if err != nil {
			return nil, fmt.Errorf("discover zones: objects tagged %s: %w", t.Name, err)
		}
		var clusters []types.ManagedObjectReference
		for _, o := range objs {
			if ref := o.Reference(); ref.Type == "ClusterComputeResource" {
				clusters = append(clusters, ref)
			}
		}
		if len(clusters) != 1 {
			return nil, fmt.Errorf("discover zones: zone %s is attached to %d clusters, want 1", t.Name, len(clusters))
		}
		zones[t.Name] = clusters[0]
	}
	return zones, nil
}
