package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// outsideVCenter is a seeded vcsim of its own, serving a self-signed certificate, as an
// outside vCenter the stack is pointed at; calls counts the SOAP calls it received.
func outsideVCenter(t *testing.T) (sim *inventory.Sim, caFile string, calls *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	sim, err := inventory.StartSim(t.Context(), inventory.SimConfig{Username: "vc-admin", Password: "outside-s3cret", CertDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	c, err := sim.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Seed(t.Context(), c, sim.URL.User); err != nil {
		t.Fatal(err)
	}
	vcenter.Logout(t.Context(), c)
	calls = new(atomic.Int64)
	sim.Intercept(func(*simulator.Context, *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		calls.Add(1)
		return nil, nil
	})
	return sim, filepath.Join(dir, inventory.SimCertFile), calls
}

// `make run` pointed at a vCenter whose certificate nothing vouches for refuses to connect
// and names the settings that would; with its CA it comes up.
func TestOutsideVCenterIsVerified(t *testing.T) {
	sim, caFile, calls := outsideVCenter(t)
	env := map[string]string{
		"VMOP_DATA":             t.TempDir(),
		"VMOP_ADDR":             eventstest.FreeAddr(t),
		"VMOP_NATS_ADDR":        eventstest.FreeAddr(t),
		"VMOP_VCENTER_URL":      "https://" + sim.URL.Host + "/sdk",
		"VMOP_VCENTER_USER":     "vc-admin",
		"VMOP_VCENTER_PASSWORD": "outside-s3cret",
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := run(ctx, "all", func(k string) string { return env[k] })
	var untrusted *vcenter.CertificateError
	if !errors.As(err, &untrusted) || ctx.Err() != nil {
		t.Fatalf("run without the CA: %v, want a refusal for the certificate", err)
	}
	for _, want := range []string{sim.URL.Host, "not trusted", "x509", sim.Thumbprint, "VMOP_VCENTER_CA_FILE", "VMOP_VCENTER_THUMBPRINT", "VMOP_VCENTER_INSECURE=true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "outside-s3cret") {
		t.Errorf("error %q shows the password", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("vCenter received %d calls from a stack that does not trust it", n)
	}

	// The same settings with the thumbprint log in.
	env["VMOP_VCENTER_THUMBPRINT"] = strings.ToLower(sim.Thumbprint)
	cfg, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := connectVCenter(ctx, cfg)
	if err != nil {
		t.Fatalf("connect with VMOP_VCENTER_THUMBPRINT: %v", err)
	}
	vcenter.Logout(ctx, c)
	delete(env, "VMOP_VCENTER_THUMBPRINT")

	env["VMOP_VCENTER_CA_FILE"] = caFile
	delete(env, "VMOP_DATA")
	delete(env, "VMOP_ADDR")
	delete(env, "VMOP_NATS_ADDR")
	s := startStackWith(t, env)
	if out := s.kubectl("get", "vmclass", "-n", "my-namespace", "-o", "name"); !strings.Contains(out, "my-vm-class") {
		t.Errorf("kubectl get vmclass: %s", out)
	}
}
