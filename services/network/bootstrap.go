package network

import (
	"errors"
	"fmt"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// annotationCloudInitType chooses how cloud-init data reaches the guest (api-rules §4):
// guestinfo (the default) or cloudinitprep.
const annotationCloudInitType = "vmoperator.vmware.com/cloudinit-type"

// bootstrapPlan is what spec.bootstrap asks of the service and whether it can be done.
type bootstrapPlan struct {
	cloudInit bool   // deliver cloud-init through guestinfo
	user      string // rendered user-data
	// reason and message say why the bootstrap cannot be delivered.
	reason, message string
}

// bootstrapPlan reads spec.bootstrap. Only cloud-init through the guestinfo transport is
// delivered in this release; the other providers report NotSupported.
func (h *handler) bootstrapPlan(vm *model.VirtualMachine) bootstrapPlan {
	b := vm.Spec.Bootstrap
	switch {
	case b == nil:
		return bootstrapPlan{}
	case b.CloudInit != nil:
		if t := vm.Annotations[annotationCloudInitType]; t != "" && t != "guestinfo" {
			return bootstrapPlan{reason: model.ReasonNotSupported, message: fmt.Sprintf(
				"cloud-init delivery %q is not supported yet: without the %s annotation cloud-init data goes through guestinfo", t, annotationCloudInitType)}
		}
		user, err := userData(b.CloudInit)
		switch {
		case errors.Is(err, errSecret):
			return bootstrapPlan{reason: model.ReasonRequiredKeyNotFound, message: err.Error() + ": vmop serves no Secrets yet"}
		case err != nil:
			return bootstrapPlan{reason: model.ReasonInvalid, message: err.Error()}
		}
		return bootstrapPlan{cloudInit: true, user: user}
	}
	var provider string
	switch {
	case b.LinuxPrep != nil:
		provider = "LinuxPrep"
	case b.Sysprep != nil:
		provider = "Sysprep"
	case b.VAppConfig != nil:
		provider = "vAppConfig"
	default:
		return bootstrapPlan{}
	}
	return bootstrapPlan{reason: model.ReasonNotSupported, message: provider + " bootstrap is not delivered yet: vmop delivers cloud-init (guestinfo) only"}
}

func (b bootstrapPlan) failed() bool { return b.reason != "" }

// ready sets VirtualMachineBootstrapReady: True when there is nothing to deliver or it
// was delivered; pending says what delivery waits for.
func (b bootstrapPlan) ready(conds *reconcile.ConditionSet, pending string) {
	switch {
	case b.reason != "":
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionFalse, b.reason, b.message)
	case b.cloudInit && pending != "":
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionFalse, model.ReasonNotReady, pending)
	default:
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionTrue, "", "")
	}
}

// cloudInitConfig is the reconfigure that gives the VM the cloud-init meta-data and
// user-data, for the adapters cards, when they differ from what its ExtraConfig holds,
// removing any vApp configuration as the guestinfo transport requires (api-rules §10);
// an empty spec when there is nothing to write. Meta-data that cannot be made becomes
// the plan's reason.
func (h *handler) cloudInitConfig(mvm mo.VirtualMachine, vm *model.VirtualMachine, b *bootstrapPlan, plans []ifacePlan, cards []types.BaseVirtualDevice) (types.VirtualMachineConfigSpec, error) {
	var spec types.VirtualMachineConfigSpec
	if !b.cloudInit {
		return spec, nil
	}
	meta, err := metaData(vm, instanceID(vm, mvm), plans, cards, h.dns)
	if err != nil {
		b.reason, b.message = model.ReasonInvalid, err.Error()
		return spec, nil
	}
	want, err := guestinfo(meta, b.user)
	if err != nil {
		return spec, err
	}
	spec.ExtraConfig = extraConfigChanges(mvm.Config.ExtraConfig, want)
	if len(spec.ExtraConfig) > 0 && mvm.Config.VAppConfig != nil {
		spec.VAppConfigRemoved = types.NewBool(true)
	}
	return spec, nil
}

// instanceID is cloud-init's instance ID: the spec's (defaulted to the BIOS UUID at
// admission), else the legacy annotation, else the VM's BIOS UUID.
func instanceID(vm *model.VirtualMachine, mvm mo.VirtualMachine) string {
	if id := vm.Spec.Bootstrap.CloudInit.InstanceID; id != "" {
		return id
	}
	if id := vm.Annotations[model.AnnotationCloudInitInstanceID]; id != "" {
		return id
	}
	if vm.Spec.BiosUUID != "" {
		return vm.Spec.BiosUUID
	}
	return mvm.Config.Uuid
}
