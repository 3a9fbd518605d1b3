package power

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
)

// watchedEvents are the vCenter events after which power looks at the VM again: its power
// state changed, maybe behind vmop's back. VmReconfiguredEvent (an out-of-band CPU or
// memory change) is left to the resync: the event carries the VM's config spec, and vcsim
// copies it for the watch under the collector's lock while the VM's next reconfigure
// writes the same memory under the VM's, a data race in any process embedding vcsim.
var watchedEvents = []string{"VmPoweredOnEvent", "DrsVmPoweredOnEvent", "VmPoweredOffEvent", "VmSuspendedEvent"}

const (
	// eventPageSize is the size of the collector's latestPage, vCenter's default. More new
	// events than this between two updates may hide some: the watch then reconciles every
	// VM. (SetCollectorPageSize is not used: vcsim's fills the page without the lock that
	// PostEvent holds, a data race in any process embedding vcsim.)
	eventPageSize = 10
	// longPollSeconds bounds each WaitForUpdatesEx, so vCenter never holds one forever.
	longPollSeconds = 60
	// cleanupTimeout bounds the calls that tear the watch down, after ctx has ended.
	cleanupTimeout = 5 * time.Second
	maxRetryDelay  = 30 * time.Second
)

// requester asks for reconciles (reconcile.Trigger).
type requester interface {
	Request(ctx context.Context, ref events.Ref)
	RequestAll(ctx context.Context) error
}

// watcher turns vCenter's VM events into reconciles. It follows one EventHistoryCollector
// (a single object: cheap for vCenter whatever the number of VMs, unlike a property
// collector over a view of every VM, notes/vcsim.md §3.3).
type watcher struct {
	vc    *govmomi.Client
	index *vmIndex
	req   requester
	log   *slog.Logger
}

// run watches until ctx ends, starting over after a failure. Each start reconciles every
// VM, since changes may have happened while no watch was in place.
//
// The event collector lives as long as the session: it is reused when the watch starts
// over and goes with the Logout that ends Run. It is not destroyed explicitly because
// vcsim's DestroyCollector edits the collector list that PostEvent reads without a common
// lock (govmomi v0.56.0 simulator/event_manager.go:148 vs history_collector.go:63), a
// data race with every event posted afterwards in the same process.
func (w *watcher) run(ctx context.Context) {
	var collector *event.HistoryCollector
	delay := time.Second
	for {
		var err error
		if collector == nil {
			collector, err = w.newCollector(ctx)
		}
		if err == nil {
			err = w.watch(ctx, collector)
		}
		if ctx.Err() != nil {
			return
		}
		if fault.Is(err, &types.ManagedObjectNotFound{}) {
			collector = nil // e.g. the session was renewed: make a new one
		}
		w.log.Warn("vCenter event watch failed; starting over", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetryDelay)
	}
}

// newCollector makes the event collector the watch follows.
func (w *watcher) newCollector(ctx context.Context) (*event.HistoryCollector, error) {
	collector, err := event.NewManager(w.vc.Client).CreateCollectorForEvents(ctx, types.EventFilterSpec{
		EventTypeId: watchedEvents,
	})
	if err != nil {
		return nil, fmt.Errorf("create event collector: %w", err)
	}
	return collector, nil
}

// watch follows the collector's latestPage until ctx ends or vCenter fails. Its property
// collector is destroyed on the way out, after its long poll was cancelled: vCenter does
// not notice a client going away (notes P19).
func (w *watcher) watch(ctx context.Context, collector *event.HistoryCollector) error {
	pc, err := property.DefaultCollector(w.vc.Client).Create(ctx)
	if err != nil {
		return fmt.Errorf("create property collector: %w", err)
	}
	defer cleanup(pc.Destroy)
	filter := types.CreateFilter{Spec: types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: collector.Reference()}},
		PropSet:   []types.PropertySpec{{Type: collector.Reference().Type, PathSet: []string{"latestPage"}}},
	}}
	if _, err := pc.CreateFilter(ctx, filter); err != nil {
		return fmt.Errorf("watch event collector: %w", err)
	}

	seen := newEventCursor()
	wait := int32(longPollSeconds)
	req := types.WaitForUpdatesEx{This: pc.Reference(), Options: &types.WaitOptions{MaxWaitSeconds: &wait}}
	for {
		res, err := methods.WaitForUpdatesEx(ctx, w.vc.Client, &req)
		if err != nil {
			if ctx.Err() != nil {
				cleanup(pc.CancelWaitForUpdates)
				return ctx.Err()
			}
			return fmt.Errorf("wait for events: %w", err)
		}
		if res.Returnval == nil {
			continue // the long poll expired
		}
		req.Version = res.Returnval.Version
		for _, fs := range res.Returnval.FilterSet {
			for _, obj := range fs.ObjectSet {
				for _, change := range obj.ChangeSet {
					page, ok := change.Val.(types.ArrayOfEvent)
					if change.Name != "latestPage" || !ok {
						continue
					}
					if err := w.handle(ctx, seen, page.Event); err != nil {
						return err
					}
				}
			}
		}
	}
}

// handle reconciles the objects of the events not seen before. The first page only sets
// the cursor and reconciles everything: what it shows happened before the watch.
func (w *watcher) handle(ctx context.Context, seen *eventCursor, page []types.BaseEvent) error {
	fresh, gap := seen.advance(page, eventPageSize)
	if gap {
		return w.req.RequestAll(ctx)
	}
	for _, e := range fresh {
		vmArg := e.GetEvent().Vm
		if vmArg == nil {
			continue
		}
		ref, ok, err := w.index.lookup(ctx, w.vc, vmArg.Vm.Value)
		if err != nil {
			// Not knowing which object the VM is, look at them all rather than miss it.
			w.log.Warn("map vCenter event to an object", "vm", vmArg.Vm.Value, "err", err)
			return w.req.RequestAll(ctx)
		}
		if ok {
			w.req.Request(ctx, ref)
		}
	}
	return nil
}

// eventCursor remembers the newest event key handled. Event keys grow monotonically.
type eventCursor struct {
	last    int32
	started bool
}

func newEventCursor() *eventCursor { return &eventCursor{} }

// advance returns the events of page newer than the cursor, oldest first, and moves the
// cursor. gap is true for the first page and when a full page holds only new events, so
// older new ones may have scrolled out of it.
func (c *eventCursor) advance(page []types.BaseEvent, pageSize int) (fresh []types.BaseEvent, gap bool) {
	newest := c.last
	for i := len(page) - 1; i >= 0; i-- { // latestPage is newest first
		key := page[i].GetEvent().Key
		if !c.started || key > c.last {
			fresh = append(fresh, page[i])
		}
		newest = max(newest, key)
	}
	gap = !c.started || (len(page) >= pageSize && len(fresh) == len(page))
	c.last, c.started = newest, true
	return fresh, gap
}

// cleanup runs a teardown call with a fresh bounded context, since the watch's own has
// usually ended; failures only leak a collector on a vCenter that is going away.
func cleanup(f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = f(ctx)
}
