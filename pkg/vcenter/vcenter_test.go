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
