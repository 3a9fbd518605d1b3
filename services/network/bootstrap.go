package network

import (
	"fmt"
	"slices"
	"strings"

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
	provider  string // CloudInit, LinuxPrep, Sysprep or vAppConfig; "" without a bootstrap
	cloudInit bool   // deliver cloud-init through guestinfo
	user      string // rendered user-data
	// prep: LinuxPrep, Sysprep or cloud-init with the cloudinitprep delivery, handed to
	// vCenter as a guest customization before power-on.
	prep          bool
	cloudInitPrep bool
	vApp          map[string]string // vApp property values; nil for none
	// reason and message say why the bootstrap cannot be delivered.
	reason, message string
	// note: what is delivered later without holding the next power-on back.
	note string
}

// planBootstrap reads spec.bootstrap and the secret values it names.
func planBootstrap(vm *model.VirtualMachine, sec *secrets) bootstrapPlan {
	b := vm.Spec.Bootstrap
	if b == nil {
		return bootstrapPlan{}
	}
	var p bootstrapPlan
	switch {
	case b.CloudInit != nil:
		p.provider = "CloudInit"
		switch t := vm.Annotations[annotationCloudInitType]; t {
		case "", "guestinfo":
			p.cloudInit = true
		case "cloudinitprep":
			p.prep, p.cloudInitPrep = true, true
		default:
			p.fail(model.ReasonInvalid, fmt.Errorf("the %s annotation is %q, neither guestinfo nor cloudinitprep", annotationCloudInitType, t))
			return p
		}
		user, err := userData(b.CloudInit, sec)
		if err != nil {
			p.fail(model.ReasonInvalid, err)
			return p
		}
		p.user = user
	case b.LinuxPrep != nil:
		p.provider, p.prep = "LinuxPrep", true
	case b.Sysprep != nil:
		p.provider, p.prep = "Sysprep", true
	}
	if b.VAppConfig != nil {
		if p.provider == "" {
			p.provider = "vAppConfig"
		}
		values, err := vAppValues(b.VAppConfig, sec)
		if err != nil {
			p.fail(model.ReasonInvalid, err)
			return p
		}
		p.vApp = values
	}
	return p
}

// implicitLinuxPrep gives a VM without a bootstrap, without CD-ROMs and with a Linux
// guest the LinuxPrep customization api-rules §10 implies (hardware clock in UTC), in the
// decoded spec only; it reports whether it did. The guest's family is its configured
// guest ID's, as VM Operator reads it: what VMware Tools report is known only once the
// guest has run, after the first boot that this customization is for.
func implicitLinuxPrep(vm *model.VirtualMachine, mvm mo.VirtualMachine) bool {
	if vm.Spec.Bootstrap != nil || (vm.Spec.Hardware != nil && len(vm.Spec.Hardware.Cdrom) > 0) ||
		mvm.Config == nil || types.GuestIDToFamily(mvm.Config.GuestId) != types.VirtualMachineGuestOsFamilyLinuxGuest {
		return false
	}
	vm.Spec.Bootstrap = &model.VirtualMachineBootstrapSpec{LinuxPrep: &model.VirtualMachineBootstrapLinuxPrepSpec{HardwareClockIsUTC: types.NewBool(true)}}
	return true
}

// fail records why the bootstrap cannot be delivered; a missing Secret or key is
// RequiredKeyNotFound whatever the caller's reason.
func (b *bootstrapPlan) fail(reason string, err error) {
	if isMissingSecret(err) {
		reason = model.ReasonRequiredKeyNotFound
	}
	b.reason, b.message = reason, b.provider+": "+err.Error()
}

func (b bootstrapPlan) failed() bool { return b.reason != "" }

// ready sets VirtualMachineBootstrapReady: True when there is nothing to deliver, it was
// delivered, or it waits behind a pending one (note); pending says what delivery waits for.
func (b bootstrapPlan) ready(conds *reconcile.ConditionSet, pending string) {
	switch {
	case b.reason != "":
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionFalse, b.reason, b.message)
	case pending != "" && b.provider != "":
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionFalse, model.ReasonNotReady, b.provider+": "+pending)
	case pending != "":
		// Without a bootstrap the VM may still get the implied LinuxPrep, known once it exists.
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionFalse, model.ReasonNotReady, pending)
	case b.note != "":
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionTrue, "", strings.TrimPrefix(b.provider+": "+b.note, ": "))
	default:
		conds.Set(model.ConditionBootstrapReady, metav1.ConditionTrue, "", "")
	}
}

// bootstrapConfig is the reconfigure that delivers the cloud-init data and the vApp
// property values (cloudInitConfig, vAppChanges); an empty spec when nothing changes.
func (h *handler) bootstrapConfig(mvm mo.VirtualMachine, vm *model.VirtualMachine, b *bootstrapPlan, plans []ifacePlan, cards []types.BaseVirtualDevice) (types.VirtualMachineConfigSpec, error) {
	spec, err := h.cloudInitConfig(mvm, vm, b, plans, cards)
	if err != nil || b.vApp == nil || b.failed() {
		return spec, err
	}
	values, err := expandVApp(b.vApp, vm, plans, cards, h.dns)
	if err != nil {
		b.fail(model.ReasonInvalid, err)
		return spec, nil
	}
	vs, err := vAppChanges(mvm.Config.VAppConfig, values)
	if err != nil {
		b.fail(model.ReasonInvalid, err)
		return spec, nil
	}
	if vs != nil {
		spec.VAppConfig = vs
	}
	return spec, nil
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
		b.fail(model.ReasonInvalid, err)
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

// transportGuestInfo is the OVF environment transport the cloudinitprep delivery enables
// (api-rules §10).
const transportGuestInfo = "com.vmware.guestInfo"

func guestInfoTransport(have types.BaseVmConfigInfo) bool {
	info, ok := have.(*types.VmConfigInfo)
	return ok && info != nil && slices.Contains(info.OvfEnvironmentTransport, transportGuestInfo)
}
