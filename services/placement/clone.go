package placement

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"go.opentelemetry.io/otel/attribute"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Span names of the clone's vCenter calls.
const (
	spanClone     = "vcenter CloneVM"
	spanUpgradeVM = "vcenter UpgradeVM"
	spanTemplate  = "vcenter RetrieveTemplate"
)

// clone makes the VM of an image of type VM: CloneVM_Task of the image's template VM
// (its status.providerItemID), with the same create spec as a deploy (class hardware,
// UUIDs, the keys naming the object) and at the chosen host, pool, folder and datastore,
// the home and every disk with the storage class's policy. A linked clone has child
// disks on the template's current snapshot (vCenter clones linked only from a snapshot;
// a template without one is copied in full), which the storage service promotes before
// registering them; a template's vTPM is copied or replaced as spec.crypto.vTPMMode says. The clone keeps the template's hardware version, so
// one spec.minHardwareVersion raises is reached with UpgradeVM_Task, as vCenter requires.
func (r *reconciler) clone(ctx context.Context, folder *object.Folder, id vmIdentity, cs types.VirtualMachineConfigSpec, img *image, ch choice, how cloneHow, attrs []attribute.KeyValue) (types.ManagedObjectReference, error) {
	template := object.NewVirtualMachine(r.vc.c.Client, types.ManagedObjectReference{Type: "VirtualMachine", Value: img.itemID})
	var tm mo.VirtualMachine
	err := traced(ctx, spanTemplate, func(ctx context.Context) error {
		return template.Properties(ctx, template.Reference(), []string{"config.hardware.device", "snapshot"}, &tm)
	}, attribute.String("vcenter.template", img.itemID))
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("template VM %s of %s %s: %w", img.itemID, img.kind, img.name, err)
	}
	upgradeTo := cs.Version
	cs.Version = ""
	folderRef := folder.Reference()
	profile := []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: ch.policy.id}}
	spec := types.VirtualMachineCloneSpec{
		Config: &cs,
		Location: types.VirtualMachineRelocateSpec{
			Folder: &folderRef, Pool: &ch.zone.pool, Host: &ch.host.ref, Datastore: &ch.datastore.ref, Profile: profile,
			DiskMoveType: string(types.VirtualMachineRelocateDiskMoveOptionsMoveAllDiskBackingsAndDisallowSharing),
		},
	}
	linked := how.linked && tm.Snapshot != nil && tm.Snapshot.CurrentSnapshot != nil
	if linked {
		spec.Snapshot = tm.Snapshot.CurrentSnapshot
		spec.Location.DiskMoveType = string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)
	}
	if tm.Config != nil {
		spec.TpmProvisionPolicy = tpmProvisionPolicy(tm.Config.Hardware.Device, how.vTPM)
		for _, d := range object.VirtualDeviceList(tm.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
			loc := types.VirtualMachineRelocateSpecDiskLocator{
				DiskId: d.GetVirtualDevice().Key, Datastore: ch.datastore.ref, Profile: profile, DiskMoveType: spec.Location.DiskMoveType,
			}
			if !linked && how.provisioning != "" { // a linked clone's child disks grow as written, whatever the mode
				loc.DiskBackingInfo = provisionedBacking(how.provisioning)
			}
			spec.Location.Disk = append(spec.Location.Disk, loc)
		}
	}
	attrs = append(attrs, attribute.String("vcenter.template", img.itemID), attribute.String("vcenter.disk_move_type", spec.Location.DiskMoveType))
	ref, err := tracedTask(ctx, spanClone, func(ctx context.Context) (*object.Task, error) {
		return template.Clone(ctx, folder, id.name, spec)
	}, attrs...)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("clone %s %s (template VM %s): %w", img.kind, img.name, img.itemID, err)
	}
	if upgradeTo == "" {
		return ref, nil
	}
	return ref, r.upgradeClone(ctx, id, ref, upgradeTo)
}

func (r *reconciler) upgradeClone(ctx context.Context, id vmIdentity, ref types.ManagedObjectReference, version string) error {
	err := traced(ctx, spanUpgradeVM, func(ctx context.Context) error {
		task, err := object.NewVirtualMachine(r.vc.c.Client, ref).UpgradeVM(ctx, version)
		if err != nil {
			return err
		}
		_, err = vcenter.WaitTask(ctx, task)
		return err
	}, objectAttr(id.namespace, id.name), attribute.String("vcenter.version", version))
	if err != nil {
		return fmt.Errorf("upgrade the clone %s to %s: %w", ref.Value, version, err)
	}
	return nil
}

// finishClone upgrades a clone found again before it was reported created whose hardware
// version is below the create's (the class's, the passthrough minimum or
// spec.minHardwareVersion): a crash or a failed UpgradeVM_Task cut the clone's upgrade
// off, and power raises a VM only to spec.minHardwareVersion.
func (r *reconciler) finishClone(ctx context.Context, id vmIdentity, vm *model.VirtualMachine, cls *class, img *image, v *vmState, prev []metav1.Condition) error {
	if img == nil || img.typ != model.ImageTypeVM || cls == nil || createdReported(prev) ||
		v.powerState != types.VirtualMachinePowerStatePoweredOff {
		return nil
	}
	return r.raiseVersion(ctx, id, v, createVersion(vm.Spec, cls.hw, img.hardwareVersion))
}

// raiseVersion upgrades the VM v made from an image to hardware version want when it is
// below.
func (r *reconciler) raiseVersion(ctx context.Context, id vmIdentity, v *vmState, want int32) error {
	if vcenter.HardwareVersion(v.version) >= want {
		return nil
	}
	return r.upgradeClone(ctx, id, v.ref, fmt.Sprintf("vmx-%d", want))
}

// cloneHow is what the VM's object asks of a clone: linked or full (the fast-deploy
// annotation), and whether a template's vTPM is kept (spec.crypto.vTPMMode).
type cloneHow struct {
	linked       bool
	vTPM         model.VTPMMode
	provisioning model.VolumeProvisioningMode // spec.advanced.defaultVolumeProvisioningMode
}

func cloneHowOf(vm *model.VirtualMachine) cloneHow {
	how := cloneHow{linked: model.LinkedClone(vm), vTPM: model.VTPMModeNew}
	if c := vm.Spec.Crypto; c != nil && c.VTPMMode != "" {
		how.vTPM = c.VTPMMode
	}
	if a := vm.Spec.Advanced; a != nil {
		how.provisioning = a.DefaultVolumeProvisioningMode
	}
	return how
}

// tpmProvisionPolicy is the clone's vTPM policy for a template with devices: copy its
// vTPM for Clone, replace it for New; none for a template without one.
func tpmProvisionPolicy(devices []types.BaseVirtualDevice, mode model.VTPMMode) string {
	if len(object.VirtualDeviceList(devices).SelectByType((*types.VirtualTPM)(nil))) == 0 {
		return ""
	}
	if mode == model.VTPMModeClone {
		return string(types.VirtualMachineCloneSpecTpmProvisionPolicyCopy)
	}
	return string(types.VirtualMachineCloneSpecTpmProvisionPolicyReplace)
}

// cloneMode words how a VM is made from an image of type VM, for the Created condition.
func cloneMode(img *image, linked bool) string {
	switch {
	case img.typ != model.ImageTypeVM:
		return ""
	case img.fromTemplateItem():
		return " as a full copy of VM template item " + img.itemID
	case linked:
		return " as a linked clone of template VM " + img.itemID
	}
	return " as a full clone of template VM " + img.itemID
}
