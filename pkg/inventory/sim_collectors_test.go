package inventory

import (
	"sync"
	"testing"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/vim25/types"
)

// Event collectors destroyed while events are posted: no data race (-race) and no leak, so
// more than vcsim's 32 can be made over the simulator's life.
func TestSimDestroysEventCollectors(t *testing.T) {
	ctx := testContext(t)
	sim, err := StartSim(ctx, SimConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	c, err := sim.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := event.NewManager(c.Client)
	done := make(chan struct{})
	var posting sync.WaitGroup
	posting.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := events.PostEvent(ctx, &types.GeneralUserEvent{GeneralEvent: types.GeneralEvent{Message: "tick"}}); err != nil {
				t.Errorf("post event: %v", err)
				return
			}
		}
	})
	for i := range 40 {
		collector, err := events.CreateCollectorForEvents(ctx, types.EventFilterSpec{})
		if err != nil {
			t.Fatalf("collector %d: %v", i, err)
		}
		if err := collector.Destroy(ctx); err != nil {
			t.Fatalf("destroy collector %d: %v", i, err)
		}
	}
	close(done)
	posting.Wait()
}
