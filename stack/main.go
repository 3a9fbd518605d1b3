// Command vmop runs the vmop stack. Without arguments (role "all") it is everything in
// one process: an embedded NATS server with JetStream on disk, an embedded vcsim with the
// seeded inventory, every service and the API. With a role it runs one part, so the
// compose file runs this same binary in every container:
//
//	vmop [flags] [all|api|placement|power|storage|network|crypto|nats|nats-init|vcsim|balance]
//	vmop version
//	vmop healthcheck URL
//
// Every setting is an environment variable and a flag (settings.go); `vmop --help` lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
)

// gcPercent is the garbage collector's target unless GOGC says otherwise.
const gcPercent = 400

// roles are what `vmop <role>` runs, with what each is.
var roles = []struct{ name, meaning string }{
	{"all", "everything in one process: embedded NATS and vcsim, every service, the API (the default)"},
	{"api", "the Kubernetes-style REST gateway"},
	{"placement", "the placement service: creates and deletes VMs"},
	{"power", "the power service"},
	{"storage", "the storage service: volumes"},
	{"network", "the network service: adapters, guest network, readiness"},
	{"crypto", "the crypto service: encryption and vTPM"},
	{"nats", "the NATS server with JetStream alone, or one node of a cluster"},
	{"nats-init", "writes the keys, credentials and CA a NATS cluster's nodes share, then exits"},
	{"vcsim", "the vCenter simulator alone, seeded with the inventory"},
	{"balance", "one address in front of several gateways (TCP, round robin, skipping dead ones)"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli runs the command line args with the environment getenv and returns the exit code.
func cli(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd, healthURL, getenv, err := parseArgs(args, getenv, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "vmop: %v (see vmop --help)\n", err)
		return 2
	}
	switch cmd {
	case "help":
		usage(stdout)
		return 0
	case "version":
		fmt.Fprintln(stdout, version())
		return 0
	case "healthcheck":
		if err := healthcheck(ctx, healthURL, filepath.Join(withDefaults(getenv)("VMOP_DATA"), "pki", "ca.crt")); err != nil {
			fmt.Fprintf(stderr, "vmop healthcheck: %v\n", err)
			return 1
		}
		return 0
	}
	env := withDefaults(getenv)
	logger, err := newLogger(stderr, env("VMOP_LOG_FORMAT"), env("VMOP_LOG_LEVEL"))
	if err != nil {
		fmt.Fprintf(stderr, "vmop: %v\n", err)
		return 2
	}
	slog.SetDefault(logger)
	if err := run(ctx, cmd, getenv); err != nil {
		slog.Error("vmop stopped", "role", cmd, "err", err)
		return 1
	}
	return 0
}

// parseArgs takes a command (a role, version, help or healthcheck with its URL) and flags
// in either order; a flag overrides its environment variable in the getenv it returns.
func parseArgs(args []string, getenv func(string) string, stdout io.Writer) (cmd, healthURL string, _ func(string) string, _ error) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	flagged := map[string]string{}
	fs := flag.NewFlagSet("vmop", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help prints usage below
	for _, s := range settings {
		if !s.NoFlag {
			fs.Func(flagName(s.Env), s.Meaning, func(v string) error { flagged[s.Env] = v; return nil })
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
		}
		return "", "", nil, err
	}
	rest := fs.Args()
	if cmd == "" && len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	if cmd == "healthcheck" {
		if len(rest) != 1 {
			return "", "", nil, errors.New("healthcheck takes one URL, e.g. http://127.0.0.1:9090/healthz")
		}
		healthURL, rest = rest[0], nil
	}
	if len(rest) > 0 {
		return "", "", nil, fmt.Errorf("unexpected arguments %q", rest)
	}
	if cmd == "" {
		cmd = "all"
	}
	return cmd, healthURL, func(k string) string {
		if v, ok := flagged[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("vmop serves VM Operator's VirtualMachine API on NATS JetStream and vCenter.\n\n")
	b.WriteString("Usage:\n  vmop [flags] [role]\n  vmop version\n  vmop healthcheck URL   exit 0 when URL answers 200, or a tcp://host:port URL accepts a connection (container health checks)\n\nRoles:\n")
	for _, r := range roles {
		fmt.Fprintf(&b, "  %-10s %s\n", r.name, r.meaning)
	}
	b.WriteString("\nSettings (a flag overrides its environment variable):\n")
	for _, s := range settings {
		name := "--" + flagName(s.Env) + ", " + s.Env
		if s.NoFlag {
			name = s.Env + " (environment only)"
		}
		fmt.Fprintf(&b, "  %s\n        %s", name, s.Meaning)
		if s.Default != "" {
			fmt.Fprintf(&b, " (default %s)", s.Default)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nOther environment variables:\n" + otherVariables)
	_, _ = io.WriteString(w, b.String())
}

// version is the module version and the VCS revision the binary was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "vmop (no build information)"
	}
	v := "vmop " + info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + info.GoVersion
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
		return fmt.Errorf("unknown role %q (want all, api, placement, power, storage, network, crypto, nats, nats-init, vcsim or balance)", role)
	}
	return start(ctx, cfg)
}
