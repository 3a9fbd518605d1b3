package power

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// errNoVM: neither placement's uniqueID nor the instance UUID leads to a VM.
var errNoVM = errors.New("no vSphere VM")

// vmProperties are what power reads of a VM for its power and status; not the whole
// ExtraConfig, which holds the bootstrap data.
var vmProperties = []string{
	"config.guestId", "config.guestFullName",
	"config.hardware.numCPU", "config.hardware.memoryMB",
	"config.cpuAllocation", "config.memoryAllocation",
	"runtime.powerState",
}

// observation is the VM as vCenter reports it.
type observation struct {
	vm       *object.VirtualMachine
	power    model.PowerState
	hardware *model.VirtualMachineHardwareStatus // CPU, memory and vGPUs
	guest    *model.VirtualMachineGuestStatus
	modes    vmState // what the power modes and restarts read
	// appliedClass is the VM's vcenter.KeyAppliedClass record, host the host it runs on:
	// what the resize reads.
	appliedClass string
	host         *types.ManagedObjectReference
	hw           vmHardware // observe_hardware.go
	// adminPaused: an admin paused the VM in vSphere (vcenter.KeyAdminPause, admin_pause.go).
	adminPaused bool
}

// uniqueID is the VM's moref, "" when there is no VM.
func (o observation) uniqueID() string {
	if o.vm == nil {
		return ""
	}
	return o.vm.Reference().Value
}

// findVM reads the VM placement created, once its unfinished tasks are done
// (vcenter.ReadVM): by its moref when placement reported one and it still carries the
// spec's instance UUID, else by the instance UUID.
func findVM(ctx context.Context, vc *govmomi.Client, instanceUUID, uniqueID string) (observation, error) {
	obs, err := read(ctx, vc, uniqueID, instanceUUID)
	if errors.Is(err, vcenter.ErrNotFound) {
		return observation{}, fmt.Errorf("%w with moref %q or instance UUID %q", errNoVM, uniqueID, instanceUUID)
	}
	return obs, err
}

// observe reads vm again, after an operation on it.
func observe(ctx context.Context, vc *govmomi.Client, vm *object.VirtualMachine) (observation, error) {
	return read(ctx, vc, vm.Reference().Value, "")
}

// read reads the VM's power state, CPU, memory and guest (api-rules §3) and what the
// modes and the resize need.
func read(ctx context.Context, vc *govmomi.Client, moref, instanceUUID string) (observation, error) {
	var o mo.VirtualMachine
	vm, err := vcenter.ReadVM(ctx, vc, moref, instanceUUID, slices.Concat(vmProperties, modeProperties, hardwareProperties), &o)
	if err != nil {
		return observation{}, err
	}
	obs := observation{vm: vm, power: powerState(o.Runtime.PowerState)}
	obs.modes.power = obs.power
	obs.host = o.Runtime.Host
	if o.Guest != nil {
		obs.modes.toolsRunning = toolsRunning(o.Guest.ToolsRunningStatus)
	}
	if cfg := o.Config; cfg != nil {
		recorded(cfg.ExtraConfig, &obs)
		obs.adminPaused = vcenter.AdminPaused(cfg.ExtraConfig)
		obs.guest = &model.VirtualMachineGuestStatus{GuestID: cfg.GuestId, GuestFullName: cfg.GuestFullName}
		obs.hardware = &model.VirtualMachineHardwareStatus{
			CPU:    &model.VirtualMachineCPUAllocationStatus{Total: cfg.Hardware.NumCPU},
			Memory: &model.VirtualMachineMemoryAllocationStatus{Total: mebibytes(int64(cfg.Hardware.MemoryMB))},
		}
		if a := cfg.CpuAllocation; a != nil && a.Reservation != nil {
			obs.hardware.CPU.Reservation = *a.Reservation
		}
		if a := cfg.MemoryAllocation; a != nil && a.Reservation != nil && *a.Reservation > 0 {
			obs.hardware.Memory.Reservation = mebibytes(*a.Reservation)
		}
		obs.hw = hardwareOf(cfg, obs.hardware)
	}
	return obs, nil
}

// powerState maps runtime.powerState to the API's words; "" for anything else.
func powerState(s types.VirtualMachinePowerState) model.PowerState {
	switch s {
	case types.VirtualMachinePowerStatePoweredOn:
		return model.PowerStateOn
	case types.VirtualMachinePowerStatePoweredOff:
		return model.PowerStateOff
	case types.VirtualMachinePowerStateSuspended:
		return model.PowerStateSuspended
	}
	return ""
}

func mebibytes(mb int64) *resource.Quantity {
	return resource.NewQuantity(mb<<20, resource.BinarySI)
}
