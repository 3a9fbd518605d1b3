package network

import (
	"maps"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// What the guest uses: nothing when the VM is off, what it reports while VMware Tools
// run, and "cannot say" (nil) while they do not, so that nothing is released then.
func TestGuestUses(t *testing.T) {
	running := string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
	guest := &types.GuestInfo{ToolsRunningStatus: running, IpAddress: "192.168.0.5", Net: []types.GuestNicInfo{{
		IpAddress: []string{"192.168.0.6", "fe80::1"},
		IpConfig:  &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{{IpAddress: "192.168.0.7"}}},
	}}}
	vm := func(power types.VirtualMachinePowerState, g *types.GuestInfo) mo.VirtualMachine {
		return mo.VirtualMachine{Runtime: types.VirtualMachineRuntimeInfo{PowerState: power}, Guest: g}
	}
	notRunning := *guest
	notRunning.ToolsRunningStatus = string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning)
	tests := []struct {
		name string
		vm   mo.VirtualMachine
		want map[string]bool
	}{
		{"off", vm(types.VirtualMachinePowerStatePoweredOff, guest), map[string]bool{}},
		{"on, Tools running", vm(types.VirtualMachinePowerStatePoweredOn, guest),
			map[string]bool{"192.168.0.5": true, "192.168.0.6": true, "fe80::1": true, "192.168.0.7": true}},
		{"suspended", vm(types.VirtualMachinePowerStateSuspended, guest),
			map[string]bool{"192.168.0.5": true, "192.168.0.6": true, "fe80::1": true, "192.168.0.7": true}},
		{"on, Tools not running", vm(types.VirtualMachinePowerStatePoweredOn, &notRunning), nil},
		{"on, no guest read", vm(types.VirtualMachinePowerStatePoweredOn, nil), nil},
	}
	for _, tt := range tests {
		if got := guestUses(tt.vm); !maps.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("%s: guestUses = %v, want %v", tt.name, got, tt.want)
		}
	}
}
