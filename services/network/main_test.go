package network

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/inventory/deploytest"
)

// vc is one seeded vcsim for the package; each test deploys its own VMs and its own NATS.
var vc *deploytest.Env

func TestMain(m *testing.M) { deploytest.Main(m, &vc) }

// startService runs the network service against a fresh NATS with the inventory's
// storage classes and VM classes in SPECS, until the test ends.
func startService(t *testing.T) jetstream.JetStream {
	t.Helper()
	return vc.Serve(t, func(ctx context.Context, js jetstream.JetStream) error {
		// The guests change in vcsim only when a test sets them: read them often.
		return Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint(), GuestPoll: 100 * time.Millisecond})
	}, "storageclasses", "virtualmachineclasses")
}
