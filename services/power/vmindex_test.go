package power

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/vcenter"
)

// noRequests is a requester for a watch whose reconciles do not matter here.
type noRequests struct{}

func (noRequests) Request(context.Context, events.Ref) {}
func (noRequests) RequestAll(context.Context) error    { return nil }

// The watch's index remembers every VM a power event names, vmop's (by its object) or not;
// a VM's removal event makes it forget the VM, so the index does not grow with every VM
// that ever had one.
func TestRemovedVMsAreForgotten(t *testing.T) {
	vc := simVCenter(t)
	x := newVMIndex()
	w := &watcher{vc: vc, index: x, req: noRequests{}, log: slog.Default()}
	ours := simVM(t, vc, "ours", uuid.NewString(), &types.OptionValue{Key: vcenter.KeyObject, Value: "my-namespace/ours"})
	foreign := simVM(t, vc, "foreign", uuid.NewString())
	about := func(vm types.ManagedObjectReference) types.VmEvent {
		return types.VmEvent{Event: types.Event{Vm: &types.VmEventArgument{Vm: vm}}}
	}
	for _, vm := range []types.ManagedObjectReference{ours.Reference(), foreign.Reference()} {
		if err := w.handle(t.Context(), []types.BaseEvent{&types.VmPoweredOnEvent{VmEvent: about(vm)}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.refs) != 2 || len(x.known) != 1 {
		t.Fatalf("index after the power-ons: %v, %v; want both VMs, one of them vmop's", x.refs, x.known)
	}
	for _, vm := range []types.ManagedObjectReference{ours.Reference(), foreign.Reference()} {
		if err := w.handle(t.Context(), []types.BaseEvent{&types.VmRemovedEvent{VmEvent: about(vm)}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.refs) != 0 || len(x.known) != 0 {
		t.Errorf("index after the removals: %v, %v; want empty", x.refs, x.known)
	}
}
