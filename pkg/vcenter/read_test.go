package vcenter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// ReadVM trusts a moref only while its VM has the instance UUID, searches otherwise, and
// reads the asked properties of the VM it settles on.
func TestReadVM(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	var want mo.VirtualMachine
	if err := sim.vm.Properties(ctx, sim.vm.Reference(), []string{"name", "config.instanceUuid"}, &want); err != nil {
		t.Fatal(err)
	}
	uuid, ref := want.Config.InstanceUuid, sim.vm.Reference()
	for _, moref := range []string{ref.Value, "", "vm-404", "host-21"} {
		var got mo.VirtualMachine
		vm, err := vcenter.ReadVM(ctx, sim.c, moref, uuid, []string{"name"}, &got)
		if err != nil || vm.Reference() != ref {
			t.Errorf("ReadVM(%q) = %v, %v; want %v", moref, vm, err, ref)
			continue
		}
		if got.Name != want.Name || got.Config == nil || got.Config.InstanceUuid != uuid {
			t.Errorf("ReadVM(%q) read name %q, config %+v; want %q and instance UUID %s", moref, got.Name, got.Config, want.Name, uuid)
		}
	}
	var got mo.VirtualMachine
	if vm, err := vcenter.ReadVM(ctx, sim.c, ref.Value, "", []string{"name"}, &got); err != nil || vm.Reference() != ref || got.Name != want.Name {
		t.Errorf("ReadVM without a UUID trusts the moref: got %v %q, %v", vm, got.Name, err)
	}
	for _, c := range []struct{ moref, uuid string }{
		{ref.Value, "00000000-0000-4000-8000-000000000000"}, // another VM's moref, an unknown UUID
		{"vm-404", ""}, // a moref of nothing and no UUID to search by
	} {
		if _, err := vcenter.ReadVM(ctx, sim.c, c.moref, c.uuid, nil, &got); !errors.Is(err, vcenter.ErrNotFound) {
			t.Errorf("ReadVM(%q, %q): err = %v, want ErrNotFound", c.moref, c.uuid, err)
		}
	}
}

// ReadVM returns only once a reconfigure started by someone else has finished, and reads
// its result.
func TestReadVMAwaitsTasks(t *testing.T) {
	sim := simulate(t)
	ctx, vm := t.Context(), sim.vm
	// vcsim's task delay is process-wide (notes P15): only this test reconfigures.
	// LockHandoff 0: the VM stays readable while the task sleeps (notes §4.2).
	simulator.TaskDelay.MethodDelay = map[string]int{"ReconfigVm": 300, "LockHandoff": 0}
	defer func() { simulator.TaskDelay.MethodDelay = nil }()
	if _, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{Annotation: "changed"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var got mo.VirtualMachine
	if _, err := vcenter.ReadVM(ctx, sim.c, vm.Reference().Value, "", []string{"config.annotation"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Config == nil || got.Config.Annotation != "changed" {
		t.Errorf("ReadVM (after %v) read config %+v: the reconfigure had not finished", time.Since(start), got.Config)
	}
}
