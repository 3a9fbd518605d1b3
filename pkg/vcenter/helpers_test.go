package vcenter_test

import (
	"net/url"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"

	"github.com/vmop/vmop/pkg/vcenter"
)

// simulated is a vcsim vCenter with a client connected through vcenter.Connect and one
// of its (powered-on) VMs.
type simulated struct {
	url *url.URL
	c   *govmomi.Client
	vm  *object.VirtualMachine
}

func simulate(t *testing.T) simulated {
	t.Helper()
	m := simulator.VPX()
	t.Cleanup(m.Remove)
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	s := m.Service.NewServer()
	t.Cleanup(s.Close)
	c, err := vcenter.Connect(t.Context(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c.Client, true).VirtualMachineList(t.Context(), "/...")
	if err != nil || len(vms) == 0 {
		t.Fatalf("simulator VMs: %v", err)
	}
	return simulated{url: s.URL, c: c, vm: vms[0]}
}
