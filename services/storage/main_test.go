package storage

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/inventory/deploytest"
)

// vc is one seeded vcsim for the package; each test deploys its own VMs and its own NATS.
var vc *deploytest.Env

func TestMain(m *testing.M) { deploytest.Main(m, &vc) }

// startService runs the storage service against a fresh NATS with the inventory's
// storage classes in SPECS, until the test ends.
func startService(t *testing.T) jetstream.JetStream {
	t.Helper()
	return vc.Serve(t, func(ctx context.Context, js jetstream.JetStream) error {
		return Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()})
	}, "storageclasses")
}
