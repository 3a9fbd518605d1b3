package vcenter_test

import (
	"crypto/tls"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/vmop/vmop/pkg/vcenter"
)

// simulated is a vcsim vCenter with a client connected through vcenter.Connect and one
// of its (powered-on) VMs.
type simulated struct {
	endpoint vcenter.Endpoint // trusted by its certificate's thumbprint
	server   *simulator.Server
	c        *govmomi.Client
	vm       *object.VirtualMachine
}

func simulate(t *testing.T) simulated {
	t.Helper()
	m := simulator.VPX()
	t.Cleanup(m.Remove)
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.RegisterEndpoints = true // the vAPI (REST) endpoints
	m.Service.TLS = new(tls.Config)    // net/http's self-signed test certificate
	s := m.Service.NewServer()
	t.Cleanup(s.Close)
	endpoint := vcenter.Endpoint{URL: s.URL, Thumbprint: soap.ThumbprintSHA256(s.Certificate())}
	c, err := vcenter.Connect(t.Context(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c.Client, true).VirtualMachineList(t.Context(), "/...")
	if err != nil || len(vms) == 0 {
		t.Fatalf("simulator VMs: %v", err)
	}
	return simulated{endpoint: endpoint, server: s, c: c, vm: vms[0]}
}
