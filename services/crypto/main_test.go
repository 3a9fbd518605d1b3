package crypto

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/inventory/deploytest"
)

// vc is one seeded vcsim for the package; each test deploys its own VMs and its own NATS.
var vc *deploytest.Env

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	env, err := deploytest.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	vc = env
	code := m.Run()
	env.Close()
	os.Exit(code)
}

// seeded are the inventory kinds the service reads.
var seeded = []string{"storageclasses", "virtualmachineclasses", "encryptionclasses"}

// startService runs the crypto service against a fresh NATS with the inventory's storage
// classes, VM classes and encryption classes in SPECS, until the test ends.
func startService(t *testing.T) jetstream.JetStream {
	t.Helper()
	return vc.Serve(t, run, seeded...)
}

func run(ctx context.Context, js jetstream.JetStream) error {
	return Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()})
}
