package inventory

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vmware/govmomi"
)

// seeded is one simulator seeded once for the package's tests; each test reads it, and the tests
// that change vCenter (a deploy) clean up what they add.
var seeded struct {
	sim    *Sim
	client *govmomi.Client
}

func TestMain(m *testing.M) {
	code, err := runSeeded(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func runSeeded(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sim, err := StartSim(ctx, SimConfig{Listen: "127.0.0.1:0", Username: "admin", Password: "secret"})
	if err != nil {
		return 0, err
	}
	defer sim.Close()
	c, err := sim.Client(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.Logout(context.Background()) }()
	if err := Seed(ctx, c, sim.URL.User); err != nil {
		return 0, err
	}
	seeded.sim, seeded.client = sim, c
	return m.Run(), nil
}

// testContext is a context bounded by the test's deadline, so a hang fails fast.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
