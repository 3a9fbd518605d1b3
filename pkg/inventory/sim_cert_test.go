package inventory

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/vmop/vmop/pkg/vcenter"
)

// The certificate kept in CertDir verifies the simulator as a CA file, and survives a
// restart; without trust settings the connection is refused.
func TestSimCertificateKeptAndVerifiable(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	var thumbprints []string
	for range 2 {
		sim, err := StartSim(ctx, SimConfig{CertDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		thumbprints = append(thumbprints, sim.Thumbprint)
		c, err := vcenter.Connect(ctx, vcenter.Endpoint{URL: sim.URL, CAFile: filepath.Join(dir, SimCertFile)})
		if err != nil {
			sim.Close()
			t.Fatalf("connect trusting %s: %v", SimCertFile, err)
		}
		vcenter.Logout(ctx, c)
		_, err = vcenter.Connect(ctx, vcenter.Endpoint{URL: sim.URL})
		var untrusted *vcenter.CertificateError
		if !errors.As(err, &untrusted) || untrusted.Thumbprint != sim.Thumbprint {
			t.Errorf("connect without trust settings: %v, want a CertificateError naming %s", err, sim.Thumbprint)
		}
		sim.Close()
	}
	if thumbprints[0] != thumbprints[1] {
		t.Errorf("the restarted simulator serves another certificate: %v", thumbprints)
	}
}
