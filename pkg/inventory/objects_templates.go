package inventory

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// An image of type VM names a template VM of TemplateFolder in its spec.providerRef
// (apiVersion TemplateProviderAPIVersion, kind TemplateProviderKind, the VM's name); its
// status.providerItemID is the VM's managed object ID, as VM Operator's VM-backed images
// have it ("vm-…"), which placement clones.
const (
	TemplateProviderAPIVersion = "vim25"
	TemplateProviderKind       = "VirtualMachine"
)

var templateProps = []string{"name", "config.template", "config.version", "config.firmware", "config.guestId",
	"config.changeVersion", "config.createDate", "config.hardware.device"}

// templateImage is a template VM as an image.
type templateImage struct{ vm mo.VirtualMachine }

// object renders the image as a VirtualMachineImage in namespace.
func (i templateImage) object(namespace string) map[string]any {
	status, labels := i.status()
	o := newObject(vmopV1alpha5, "VirtualMachineImage", namespace, "vmi-"+itemHash(TemplateFolder+"/"+i.vm.Name), labels)
	o["spec"] = map[string]any{"providerRef": map[string]any{
		"apiVersion": TemplateProviderAPIVersion, "kind": TemplateProviderKind, "name": i.vm.Name,
	}}
	o["status"] = status
	return o
}

// status is the image status read from the template VM, and the labels mirroring it.
func (i templateImage) status() (map[string]any, map[string]string) {
	c := i.vm.Config
	at := time.Unix(0, 0)
	if c.CreateDate != nil {
		at = *c.CreateDate
	}
	status := map[string]any{
		"name":                   i.vm.Name,
		"type":                   "VM",
		"providerItemID":         i.vm.Self.Value,
		"providerContentVersion": c.ChangeVersion,
		"firmware":               c.Firmware,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "True", "message": "",
			"lastTransitionTime": at.UTC().Truncate(time.Second).Format(time.RFC3339),
		}},
	}
	labels := map[string]string{imageTypeLabel: "VM"}
	if v := hardwareVersion(c.Version); v > 0 {
		status["hardwareVersion"] = v
	}
	if c.GuestId != "" {
		status["osInfo"] = map[string]any{"type": c.GuestId}
		if isLabelValue(c.GuestId) {
			labels[imageOSLabel+"type"] = c.GuestId
		}
	}
	setList(status, "disks", templateDisks(object.VirtualDeviceList(c.Hardware.Device)))
	return omitEmpty(status), labels
}

// templateDisks lists the VM's disks in device order, named disk-0, disk-1, … with their
// size and controller placement.
func templateDisks(devices object.VirtualDeviceList) []any {
	var out []any
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		info := map[string]any{
			"name":      fmt.Sprintf("disk-%d", len(out)),
			"limit":     quantity(disk.CapacityInBytes),
			"requested": quantity(disk.CapacityInBytes),
		}
		if disk.UnitNumber != nil {
			info["unitNumber"] = int64(*disk.UnitNumber)
		}
		if typ, bus, ok := controllerOf(devices.FindByKey(disk.ControllerKey)); ok {
			info["controllerType"], info["controllerBusNumber"] = typ, int64(bus)
		}
		out = append(out, info)
	}
	return out
}

// controllerOf is a storage controller's type, as VM Operator names it, and bus.
func controllerOf(d types.BaseVirtualDevice) (string, int32, bool) {
	switch c := d.(type) {
	case *types.VirtualIDEController:
		return "IDE", c.BusNumber, true
	case *types.VirtualNVMEController:
		return "NVME", c.BusNumber, true
	case types.BaseVirtualSATAController:
		return "SATA", c.GetVirtualSATAController().BusNumber, true
	case types.BaseVirtualSCSIController:
		return "SCSI", c.GetVirtualSCSIController().BusNumber, true
	}
	return "", 0, false
}

// templateImages reads the template VMs of TemplateFolder, by name.
func templateImages(ctx context.Context, c *vim25.Client) ([]templateImage, error) {
	finder := find.NewFinder(c, false)
	vms, err := finder.VirtualMachineList(ctx, path.Join("/", Datacenter, "vm", TemplateFolder, "*"))
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("templates in %s: %w", TemplateFolder, err)
	}
	refs := make([]types.ManagedObjectReference, len(vms))
	for i, vm := range vms {
		refs[i] = vm.Reference()
	}
	var all []mo.VirtualMachine
	if err := property.DefaultCollector(c).Retrieve(ctx, refs, templateProps, &all); err != nil {
		return nil, fmt.Errorf("read templates in %s: %w", TemplateFolder, err)
	}
	slices.SortFunc(all, func(a, b mo.VirtualMachine) int { return strings.Compare(a.Name, b.Name) })
	var out []templateImage
	for _, vm := range all {
		if vm.Config != nil && vm.Config.Template {
			out = append(out, templateImage{vm: vm})
		}
	}
	return out, nil
}

// TemplateImageStatus is the status of the image whose spec.providerRef names the
// template VM name of TemplateFolder; found is false when there is no such template.
func TemplateImageStatus(ctx context.Context, c *vim25.Client, name string) (status map[string]any, found bool, err error) {
	images, err := templateImages(ctx, c)
	if err != nil {
		return nil, false, err
	}
	for _, img := range images {
		if img.vm.Name == name {
			status, _ := img.status()
			return status, true, nil
		}
	}
	return nil, false, nil
}
