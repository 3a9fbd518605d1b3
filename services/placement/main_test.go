package placement

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vmop/vmop/pkg/inventory"
)

// seeded is one vcsim with the seeded inventory, shared by the package's tests (each test
// has its own NATS and its own VM names), and the API objects describing it.
var seeded struct {
	sim  *inventory.Sim
	objs []map[string]any
}

// spans records every span of the test binary.
var spans = tracetest.NewSpanRecorder()

func TestMain(m *testing.M) {
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
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
	sim, err := inventory.StartSim(ctx, inventory.SimConfig{Username: "admin", Password: "secret"})
	if err != nil {
		return 0, err
	}
	defer sim.Close()
	c, err := sim.Client(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.Logout(context.Background()) }()
	if err := inventory.Seed(ctx, c, sim.URL.User); err != nil {
		return 0, err
	}
	objs, err := inventory.Objects(ctx, c, sim.URL.User)
	if err != nil {
		return 0, err
	}
	seeded.sim, seeded.objs = sim, objs
	return m.Run(), nil
}
