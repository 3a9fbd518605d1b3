package vcenter_test

import (
	"errors"
	"testing"

	"github.com/vmop/vmop/pkg/vcenter"
)

// ReadVMConfig returns the VM ReadVM settles on with the asked properties by value, and
// ReadVM's ErrNotFound for no VM.
func TestReadVMConfig(t *testing.T) {
	sim := simulate(t)
	ctx := t.Context()
	got, vm, err := vcenter.ReadVMConfig(ctx, sim.c, sim.vm.Reference().Value, "", []string{"config.hardware.device"})
	if err != nil || vm.Reference() != sim.vm.Reference() {
		t.Fatalf("ReadVMConfig = %v, %v; want %v", vm, err, sim.vm.Reference())
	}
	if len(got.Config.Hardware.Device) == 0 {
		t.Error("ReadVMConfig read no devices of the VM")
	}
	if _, vm, err := vcenter.ReadVMConfig(ctx, sim.c, "vm-404", "", nil); !errors.Is(err, vcenter.ErrNotFound) || vm != nil {
		t.Errorf("ReadVMConfig(vm-404) = %v, %v; want ErrNotFound", vm, err)
	}
}
