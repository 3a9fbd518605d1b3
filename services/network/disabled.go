package network

import (
	"strconv"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// keyNetworkDisabled records on the VM whether it was deployed without networking:
// spec.network.disabled has no effect once the vSphere VM exists (api-rules §2, the
// seed's "Disable Networking"), so the service's first reconfigure of the VM writes the
// value it had then, in the same call as the adapters it adds or removes, and every later
// reconcile follows the record, not the spec.
const keyNetworkDisabled = "vmop.network.disabled"

// deployedDisabled tells whether the VM goes without network adapters, and the ExtraConfig
// change that records it when the VM carries no record yet.
func deployedDisabled(mvm mo.VirtualMachine, vm *model.VirtualMachine) (disabled bool, record []types.BaseOptionValue) {
	if mvm.Config != nil {
		if v, ok := object.OptionValueList(mvm.Config.ExtraConfig).GetString(keyNetworkDisabled); ok {
			return v == "true", nil
		}
	}
	disabled = specDisabled(vm)
	return disabled, []types.BaseOptionValue{&types.OptionValue{Key: keyNetworkDisabled, Value: strconv.FormatBool(disabled)}}
}

func specDisabled(vm *model.VirtualMachine) bool {
	return vm.Spec.Network != nil && vm.Spec.Network.Disabled
}
