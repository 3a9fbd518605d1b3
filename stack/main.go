// Command vmop runs the vmop stack. Without arguments (role "all") it is everything in
// one process: an embedded NATS server with JetStream on disk, an embedded vcsim with the
// seeded inventory, every service and the API. With a role it runs one part, so the
// compose file runs this same binary in every container:
//
//	vmop [all|api|placement|power|storage|network|crypto|nats|vcsim]
//
// Settings come from the environment only (see config.go).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// gcPercent is the garbage collector's target unless GOGC says otherwise.
const gcPercent = 400

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	role := "all"
	if len(os.Args) > 1 {
		role = os.Args[1]
	}
	if err := run(ctx, role, os.Getenv); err != nil {
		slog.Error("vmop stopped", "role", role, "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, role string, getenv func(string) string) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// The process's work is short-lived garbage (SOAP, JSON, NATS messages; all of
		// vcsim's in the all-in-one process): collecting at 4× the live heap instead of 2×
		// spends half the CPU on the collector for a heap that stays small.
		debug.SetGCPercent(gcPercent)
	}
	shutdownTracing, err := setupTracing(ctx, "vmop-"+role, getenv("OTEL_TRACES_EXPORTER"))
	if err != nil {
		return err
	}
	defer shutdownTracing()
	start, ok := roleFor(role)
	if !ok {
		return fmt.Errorf("unknown role %q (want all, api, placement, power, storage, network, crypto, nats or vcsim)", role)
	}
	return start(ctx, cfg)
}
