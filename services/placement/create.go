package placement

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	vapi "github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/types"
	"go.opentelemetry.io/otel/attribute"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// configSpecProvider is the deploy's VmConfigSpec format: an XML VirtualMachineConfigSpec.
const configSpecProvider = "XML"

// createTimeout bounds one create call, so a hung vCenter call fails (and is retried)
// instead of holding the VM's reconcile forever.
const createTimeout = 10 * time.Minute

// fallbackGuestID is the guest of an ISO VM whose spec names none (admission requires one
// for VMs with CD-ROMs, so this is a last resort).
const fallbackGuestID = "otherGuest64"

// create makes the VM, powered off, at the chosen place: a content library deploy of an
// OVF image, a clone of the template VM of an image of type VM (linked or not), a deploy
// of the VM template library item of an image of type VM, or an empty VM for an ISO image
// (storage attaches the ISO). The VM is created with its final configuration, so the
// instance UUID that finds it exists from the start (but a VM template item's, configured
// right after: deployTemplate), and with its object name in the namespace folder, where
// vCenter refuses a second one.
func (r *reconciler) create(ctx context.Context, t *topology, id vmIdentity, spec model.VirtualMachineSpec, cls *class, img *image, ch choice, how cloneHow) (types.ManagedObjectReference, error) {
	folder, err := r.namespaceFolder(ctx, t, id.namespace, true)
	if err != nil {
		return types.ManagedObjectReference{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cs := createSpec(id, spec, cls, ch.host.coreMHz, img.hardwareVersion)
	attrs := []attribute.KeyValue{objectAttr(id.namespace, id.name), attribute.String("vmop.image", img.name),
		attribute.String("vcenter.host", ch.host.name), attribute.String("vcenter.datastore", ch.datastore.name),
		attribute.String("vcenter.storage_policy", ch.policy.id)}
	switch img.typ {
	case model.ImageTypeISO:
		return r.createEmpty(ctx, folder, id, cs, ch, attrs)
	case model.ImageTypeVM:
		if img.fromTemplateItem() {
			return r.deployTemplate(ctx, folder, id, spec, cls, img, ch, attrs)
		}
		return r.clone(ctx, folder, id, cs, img, ch, how, attrs)
	}
	return r.deploy(ctx, folder, id, cs, img, ch, how.provisioning, attrs)
}

func (r *reconciler) deploy(ctx context.Context, folder *object.Folder, id vmIdentity, cs types.VirtualMachineConfigSpec, img *image, ch choice, provisioning model.VolumeProvisioningMode, attrs []attribute.KeyValue) (types.ManagedObjectReference, error) {
	xmlSpec, err := configSpecXML(cs)
	if err != nil {
		return types.ManagedObjectReference{}, err
	}
	d := vapi.Deploy{
		DeploymentSpec: vapi.DeploymentSpec{
			Name: id.name, DefaultDatastoreID: ch.datastore.ref.Value, AcceptAllEULA: true,
			// The home and every disk of the image get the policy.
			StorageProfileID: ch.policy.id,
			// The image's disks as spec.advanced.defaultVolumeProvisioningMode asks ("": as the OVF says).
			StorageProvisioning: ovfProvisioning[provisioning],
			VmConfigSpec:        &vapi.VmConfigSpec{Provider: configSpecProvider, XML: xmlSpec},
		},
		Target: vapi.Target{ResourcePoolID: ch.zone.pool.Value, HostID: ch.host.ref.Value, FolderID: folder.Reference().Value},
	}
	var ref *types.ManagedObjectReference
	err = traced(ctx, spanDeploy, func(ctx context.Context) error {
		var err error
		ref, err = vapi.NewManager(r.vc.rest).DeployLibraryItem(ctx, img.itemID, d)
		return err
	}, append(attrs, attribute.String("vcenter.library_item", img.itemID))...)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("deploy %s %s (library item %s): %w", img.kind, img.name, img.itemID, err)
	}
	return *ref, nil
}

func (r *reconciler) createEmpty(ctx context.Context, folder *object.Folder, id vmIdentity, cs types.VirtualMachineConfigSpec, ch choice, attrs []attribute.KeyValue) (types.ManagedObjectReference, error) {
	cs.Name = id.name
	cs.Files = &types.VirtualMachineFileInfo{VmPathName: "[" + ch.datastore.name + "]"}
	cs.VmProfile = []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: ch.policy.id}}
	if cs.GuestId == "" {
		cs.GuestId = fallbackGuestID
	}
	pool := object.NewResourcePool(r.vc.c.Client, ch.zone.pool)
	host := object.NewHostSystem(r.vc.c.Client, ch.host.ref)
	ref, err := tracedTask(ctx, spanCreateVM, func(ctx context.Context) (*object.Task, error) {
		return folder.CreateVM(ctx, cs, pool, host)
	}, attrs...)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("create VM %s: %w", id.name, err)
	}
	return ref, nil
}

// configure gives a VM made without its configuration that configuration: one deployed
// from a VM template item, or one found by name whose create stopped before its
// configuration was applied (img, when known, is the image it was made from: a VM template
// item's deploy copied the template's vTPM). hostMHz is the clock of its host's cores.
func (r *reconciler) configure(ctx context.Context, ref types.ManagedObjectReference, id vmIdentity, spec model.VirtualMachineSpec, cls *class, img *image, hostMHz int64) error {
	cs := createSpec(id, spec, cls, hostMHz, 0)
	cs.Version = ""                           // set at create only; vCenter upgrades hardware with UpgradeVM
	if img != nil && img.fromTemplateItem() { // the deploy copied the template's vTPM
		renew, err := r.vTPMRenewal(ctx, ref, spec)
		if err != nil {
			return err
		}
		cs.DeviceChange = append(cs.DeviceChange, renew...)
	}
	return r.reconfigure(ctx, id, ref, cs)
}

// reconfigure applies cs to the VM and waits for it, traced.
func (r *reconciler) reconfigure(ctx context.Context, id vmIdentity, ref types.ManagedObjectReference, cs types.VirtualMachineConfigSpec) error {
	return traced(ctx, spanReconfigure, func(ctx context.Context) error {
		task, err := object.NewVirtualMachine(r.vc.c.Client, ref).Reconfigure(ctx, cs)
		if err != nil {
			return err
		}
		_, err = vcenter.WaitTask(ctx, task)
		return err
	}, objectAttr(id.namespace, id.name))
}

// isNotFound reports that a managed object no longer exists.
func isNotFound(err error) bool {
	return err != nil && fault.Is(err, &types.ManagedObjectNotFound{})
}
