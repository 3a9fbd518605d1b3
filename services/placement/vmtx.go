package placement

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	vapi "github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"go.opentelemetry.io/otel/attribute"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// spanDeployTemplate is the span of a VM template item's deploy.
const spanDeployTemplate = "vcenter DeployTemplateLibraryItem"

// useSpecifiedPolicy is the vAPI storage policy type that applies the policy it names.
const useSpecifiedPolicy = "USE_SPECIFIED_POLICY"

// fromTemplateItem tells an image of type VM whose provider is a VM template (VMTX)
// library item, which is deployed, from one whose provider is a template VM ("vm-…"),
// which is cloned.
func (i *image) fromTemplateItem() bool {
	return i.typ == model.ImageTypeVM && !strings.HasPrefix(i.itemID, "vm-")
}

// deployTemplate makes the VM of a VM template item: the vAPI deploy of the item, powered
// off, at the chosen host, pool and folder, its home and disks on the chosen datastore with
// the storage class's policy. That API takes no configuration, so configure applies the
// create spec right after (class hardware, UUIDs, the keys naming the object, the vTPM as
// spec.crypto.vTPMMode says), and the hardware version is raised to the create's as a
// clone's is. A crash in between leaves a VM of that name without the keys: the next
// reconcile finds it by name and configures it (ensure), and never deploys again.
//
// vCenter also names the item's template VM (TemplateInfo.VmTemplate), which could be
// cloned with the create spec in one call; vcsim does not name it, and one path tested
// end to end is worth more than a second one never run.
func (r *reconciler) deployTemplate(ctx context.Context, folder *object.Folder, id vmIdentity, spec model.VirtualMachineSpec, cls *class, img *image, ch choice, attrs []attribute.KeyValue) (types.ManagedObjectReference, error) {
	var ref *types.ManagedObjectReference
	err := traced(ctx, spanDeployTemplate, func(ctx context.Context) error {
		var err error
		ref, err = vapi.NewManager(r.vc.rest).DeployTemplateLibraryItem(ctx, img.itemID, templateDeploySpec(id.name, folder.Reference(), ch))
		return err
	}, append(attrs, attribute.String("vcenter.library_item", img.itemID))...)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("deploy %s %s (VM template item %s): %w", img.kind, img.name, img.itemID, err)
	}
	if err := r.configure(ctx, *ref, id, spec, cls, img, ch.host.coreMHz); err != nil {
		return *ref, fmt.Errorf("configure VM %s deployed from VM template item %s: %w", ref.Value, img.itemID, err)
	}
	v, err := r.observe(ctx, *ref, false)
	if err != nil || v == nil {
		return *ref, err
	}
	return *ref, r.raiseVersion(ctx, id, v, createVersion(spec, cls.hw, 0))
}

// templateDeploySpec is the deploy of a VM template item as name at the chosen place.
func templateDeploySpec(name string, folder types.ManagedObjectReference, ch choice) vapi.DeployTemplate {
	storage := &vapi.DiskStorage{
		Datastore:     ch.datastore.ref.Value,
		StoragePolicy: &vapi.StoragePolicy{Policy: ch.policy.id, Type: useSpecifiedPolicy},
	}
	return vapi.DeployTemplate{
		Name: name, PoweredOn: false, VMHomeStorage: storage, DiskStorage: storage,
		Placement: &vapi.Placement{Folder: folder.Value, ResourcePool: ch.zone.pool.Value, Host: ch.host.ref.Value},
	}
}

// templateItemRefusal is why a VM cannot be made from img as vm asks, "" when it can:
// vmop makes a VM template item's VM with the library's deploy (deployTemplate says why),
// which copies the template in full with its disks as they are, so neither a linked clone
// (the fast-deploy annotation) nor a provisioning mode can be honoured (template VMs are
// linked-cloned, OVF deploys and full clones provisioned).
func templateItemRefusal(img *image, vm *model.VirtualMachine) string {
	if !img.fromTemplateItem() {
		return ""
	}
	if mode := vm.Annotations[model.AnnotationFastDeploy]; strings.EqualFold(mode, model.FastDeployModeLinked) {
		return fmt.Sprintf("annotation %s: %s cannot apply to %s %s: vmop deploys a VM template library item through the content library, which makes a full copy; remove the annotation or set it to %s, or use a template VM image",
			model.AnnotationFastDeploy, mode, img.kind, img.name, model.FastDeployModeDirect)
	}
	if a := vm.Spec.Advanced; a != nil && a.DefaultVolumeProvisioningMode != "" {
		return fmt.Sprintf("spec.advanced.defaultVolumeProvisioningMode %s cannot apply to %s %s: vmop deploys a VM template library item through the content library, which keeps the template's disks as they are; unset it or use an OVF or template VM image",
			a.DefaultVolumeProvisioningMode, img.kind, img.name)
	}
	return ""
}

// vTPMRenewal is the device changes that give a VM deployed from a VM template item and
// not configured yet (no keys; the deploy copied the template's vTPM) a new vTPM in place
// of the copied one, as spec.crypto.vTPMMode New (the default) asks; none for Clone, for a
// VM without a vTPM or one configured before. Only such VMs are asked about: a VM adopted
// by name from another image keeps its vTPM.
func (r *reconciler) vTPMRenewal(ctx context.Context, ref types.ManagedObjectReference, spec model.VirtualMachineSpec) ([]types.BaseVirtualDeviceConfigSpec, error) {
	if c := spec.Crypto; c != nil && c.VTPMMode == model.VTPMModeClone {
		return nil, nil
	}
	var vm mo.VirtualMachine
	err := traced(ctx, spanObserve, func(ctx context.Context) error {
		return object.NewVirtualMachine(r.vc.c.Client, ref).Properties(ctx, ref, []string{"config.hardware.device", "config.extraConfig"}, &vm)
	})
	if err != nil {
		return nil, fmt.Errorf("devices of VM %s: %w", ref.Value, err)
	}
	if vm.Config == nil || hasOption(vm.Config.ExtraConfig, vcenter.KeyUID) {
		return nil, nil
	}
	tpm := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualTPM)(nil))
	if len(tpm) == 0 {
		return nil, nil
	}
	return []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: tpm[0]},
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd,
			Device: &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: newVTPMKey}}},
	}, nil
}

// newVTPMKey is the temporary key of a renewed vTPM, apart from passthrough devices'.
const newVTPMKey = -100

func hasOption(options []types.BaseOptionValue, key string) bool {
	for _, o := range options {
		if o.GetOptionValue().Key == key {
			return true
		}
	}
	return false
}
