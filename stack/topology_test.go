package main

import (
	"context"
	"maps"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events/eventstest"
)

// topology is the compose layout run in this process: nats, vcsim, api and each service
// as its own role with its own lifetime, so a test can stop and restart one service.
type topology struct {
	*stack
	env   map[string]string
	stops map[string]func()
}

func startTopology(t *testing.T) *topology {
	t.Helper()
	tp := newTopology(t)
	tp.start("nats")
	tp.waitListening(tp.env["VMOP_NATS_ADDR"])
	tp.start("vcsim")
	tp.waitListening(tp.env["VMOP_VCSIM_ADDR"])
	for _, role := range []string{"api", "placement", "power", "storage", "network", "crypto"} {
		tp.start(role)
	}
	tp.eventually("gateway serving the seeded inventory", tp.ready)
	return tp
}

// newTopology prepares the roles' settings; no role runs yet, and those started are
// stopped when the test ends.
func newTopology(t *testing.T) *topology {
	t.Helper()
	data := t.TempDir()
	natsAddr, vcsimAddr := eventstest.FreeAddr(t), eventstest.FreeAddr(t)
	tp := &topology{
		stack: &stack{t: t, kubeconfig: filepath.Join(data, "kubeconfig"), data: data},
		env: map[string]string{
			"VMOP_DATA":        data,
			"VMOP_ADDR":        eventstest.FreeAddr(t),
			"VMOP_NATS_ADDR":   natsAddr,
			"VMOP_NATS_URL":    "nats://" + natsAddr,
			"VMOP_VCSIM_ADDR":  vcsimAddr,
			"VMOP_VCENTER_URL": "https://" + vcsimAddr + "/sdk",
			// As in compose: the vcsim role keeps its certificate in its data directory.
			"VMOP_VCENTER_CA_FILE":  filepath.Join(data, "vcsim", "tls.crt"),
			"VMOP_VCENTER_PASSWORD": "vmop-secret",
			"VMOP_GUEST_POLL":       "1s",
		},
		stops: map[string]func(){},
	}
	t.Cleanup(func() {
		for _, role := range []string{"placement", "power", "storage", "network", "crypto", "api", "vcsim", "nats"} {
			if stop := tp.stops[role]; stop != nil {
				stop()
			}
		}
	})
	return tp
}

// start runs one role until stop is called.
func (tp *topology) start(role string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// As in compose, each role has its own credentials, which the nats role writes.
	env := maps.Clone(tp.env)
	env["VMOP_NATS_CREDS"] = filepath.Join(tp.data, "nats", role+".creds")
	env["VMOP_NATS_CA"] = filepath.Join(tp.data, "nats", "ca.crt")
	go func() { done <- run(ctx, role, func(k string) string { return env[k] }) }()
	tp.stops[role] = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tp.t.Errorf("role %s: %v", role, err)
			}
		case <-time.After(30 * time.Second):
			tp.t.Errorf("role %s did not stop within 30s", role)
		}
		delete(tp.stops, role)
	}
}

func (tp *topology) waitListening(addr string) {
	tp.eventually(addr+" listening", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}
