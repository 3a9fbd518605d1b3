package network

import (
	"context"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vim25/types"
)

// backingTTL is how long a network's backing is reused: finding a network walks the
// inventory (a handful of reads per interface and reconcile), while networks are added or
// renamed rarely. A network created meanwhile is found at once, since misses are not kept.
const backingTTL = 30 * time.Second

// backings caches networkBacking by network name.
type backings struct {
	vc  *govmomi.Client
	now func() time.Time

	mu     sync.Mutex
	byName map[string]cachedBacking
}

type cachedBacking struct {
	backing types.BaseVirtualDeviceBackingInfo
	found   time.Time
}

func newBackings(vc *govmomi.Client, now func() time.Time) *backings {
	return &backings{vc: vc, now: now, byName: map[string]cachedBacking{}}
}

// get returns the backing of the named network, errNetworkNotFound when there is none.
func (b *backings) get(ctx context.Context, name string) (types.BaseVirtualDeviceBackingInfo, error) {
	b.mu.Lock()
	c, ok := b.byName[name]
	b.mu.Unlock()
	if ok && b.now().Sub(c.found) < backingTTL {
		return c.backing, nil
	}
	backing, err := networkBacking(ctx, b.vc, name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.byName[name] = cachedBacking{backing: backing, found: b.now()}
	b.mu.Unlock()
	return backing, nil
}
