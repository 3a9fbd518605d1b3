package inventory

import (
	"context"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/types"
)

// TestSimCloseEndsLongPollsAndRemovesFiles: a watch that never ends by itself must not keep Close
// waiting (notes P19), and the simulator's temp directory must be gone afterwards (P16).
func TestSimCloseEndsLongPollsAndRemovesFiles(t *testing.T) {
	ctx := testContext(t)
	sim, err := StartSim(ctx, SimConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.Client(ctx)
	if err != nil {
		sim.Close()
		t.Fatal(err)
	}
	opts, err := object.NewOptionManager(c.Client, *c.ServiceContent.Setting).Query(ctx, vcsimHomeOption)
	if err != nil || len(opts) != 1 {
		sim.Close()
		t.Fatalf("vcsim home: %v %v", opts, err)
	}
	home := opts[0].GetOptionValue().Value.(string)

	watched := make(chan error, 1)
	go func() {
		// Not cancelled by the client: only the server side can end it.
		watched <- property.Wait(context.Background(), property.DefaultCollector(c.Client), c.ServiceContent.RootFolder,
			[]string{"name"}, func([]types.PropertyChange) bool { return false })
	}()
	// The first poll returns the current state at once; the second one blocks.
	waitFor(t, "the blocking long poll", func() bool { return sim.polls.served() >= 2 })

	closed := make(chan struct{})
	go func() {
		sim.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on a long poll")
	}
	select {
	case err := <-watched:
		if err == nil {
			t.Error("watch ended without an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch still running after Close")
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("vcsim home %s still exists after Close (stat: %v)", home, err)
	}
	sim.Close() // a second Close is a no-op
}

func TestStartSimOnBusyAddressFails(t *testing.T) {
	_, err := StartSim(testContext(t), SimConfig{Listen: seeded.sim.URL.Host})
	if err == nil {
		t.Fatalf("StartSim on the busy %s succeeded", seeded.sim.URL.Host)
	}
}

func TestSimCredentials(t *testing.T) {
	ctx := testContext(t)
	c, err := seeded.sim.Client(ctx)
	if err != nil {
		t.Fatalf("configured credentials rejected: %v", err)
	}
	_ = c.Logout(ctx)
	wrong := *seeded.sim.URL
	wrong.User = url.UserPassword(seeded.sim.URL.User.Username(), "wrong")
	s := &Sim{URL: &wrong}
	if _, err := s.Client(ctx); err == nil {
		t.Error("wrong password accepted")
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
