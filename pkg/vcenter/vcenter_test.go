package vcenter_test

import (
	"errors"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"

	"github.com/vmop/vmop/pkg/vcenter"
)

func TestConnectAndFindVMByInstanceUUID(t *testing.T) {
	sim := simulate(t)
	ctx, c := t.Context(), sim.c
	var want mo.VirtualMachine
	if err := sim.vm.Properties(ctx, sim.vm.Reference(), []string{"config.instanceUuid"}, &want); err != nil {
		t.Fatal(err)
	}
	got, err := vcenter.FindVM(ctx, c, want.Config.InstanceUuid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reference() != sim.vm.Reference() {
		t.Errorf("FindVM = %v, want %v", got.Reference(), sim.vm.Reference())
	}
	if _, err := vcenter.FindVM(ctx, c, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, vcenter.ErrNotFound) {
		t.Errorf("FindVM of an unknown UUID: err = %v, want ErrNotFound", err)
	}
}

// LocateVM trusts a moref only while its VM has the instance UUID, and searches otherwise.
func TestLocateVM(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	var want mo.VirtualMachine
	if err := sim.vm.Properties(ctx, sim.vm.Reference(), []string{"config.instanceUuid"}, &want); err != nil {
		t.Fatal(err)
	}
	uuid, ref := want.Config.InstanceUuid, sim.vm.Reference()
	for _, moref := range []string{ref.Value, "", "vm-404", "host-21"} {
		got, err := vcenter.LocateVM(ctx, sim.c, moref, uuid)
		if err != nil || got.Reference() != ref {
			t.Errorf("LocateVM(%q) = %v, %v; want %v", moref, got, err, ref)
		}
	}
	if _, err := vcenter.LocateVM(ctx, sim.c, ref.Value, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, vcenter.ErrNotFound) {
		t.Errorf("LocateVM of another VM's moref and an unknown UUID: err = %v, want ErrNotFound", err)
	}
}
