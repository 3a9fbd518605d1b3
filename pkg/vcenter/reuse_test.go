package vcenter_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Answers of many sizes, the large ones chunked, which govmomi reads only up to the
// envelope's closing tag: they all come over the connection already open, not each over a
// new one with a TLS handshake.
func TestAnswersKeepTheConnection(t *testing.T) {
	sim := simulate(t)
	var dials atomic.Int64
	transport := sim.c.Client.Client.DefaultTransport()
	dial := transport.DialTLSContext
	transport.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	vms, err := find.NewFinder(sim.c.Client, true).VirtualMachineList(t.Context(), "/...")
	if err != nil {
		t.Fatal(err)
	}
	pc := property.DefaultCollector(sim.c.Client)
	var refs []types.ManagedObjectReference
	for _, vm := range vms {
		refs = append(refs, vm.Reference())
		var all []mo.VirtualMachine
		if err := pc.Retrieve(t.Context(), refs, nil, &all); err != nil {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n > 0 {
		t.Errorf("%d reads dialled vCenter %d times, want none (the login's connection serves them)", len(vms), n)
	}
}
