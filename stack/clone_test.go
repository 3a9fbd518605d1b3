package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// TestVMImageCloneAndControllers is issue #16's items 6 and 7 through the API: the seeded
// image of type VM is listed by its type label and a VM from it is a clone of its template
// (the class's hardware, the template's two disks); once the VM is upgraded, a SATA
// controller added to spec.hardware appears in vcsim and status.hardware.controllers and
// goes again when removed; the controller of the image disks stays when removed from the
// spec (admission restores it for the volumes on it), and retyping it is refused by the
// storage service with the reason; back to its type, the clone powers on.
func TestVMImageCloneAndControllers(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	const ns, name = "my-namespace", "clone-vm"
	get := func(path string) string {
		return tp.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath="+path)
	}
	tp.waitVMImages(ns)
	tp.apply("apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachine\nmetadata:\n  name: "+name+
		"\nspec:\n  className: my-vm-class\n  imageName: "+inventory.PhotonTemplate+"\n  storageClass: my-storage-class\n  powerState: PoweredOff\n", "")
	waitFor(t, 3*time.Minute, "the clone's disks registered", func() bool {
		out, err := tp.kubectlErr("get", "vm", name, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="VirtualMachineUnmanagedVolumesRegistered")].status}`)
		return err == nil && out == "True"
	})

	vm := tp.vm(vc, name)
	read := func() mo.VirtualMachine {
		t.Helper()
		var m mo.VirtualMachine
		if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.hardware", "config.template"}, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := read()
	devices := object.VirtualDeviceList(m.Config.Hardware.Device)
	var disks []int64
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disks = append(disks, d.(*types.VirtualDisk).CapacityInBytes>>30)
	}
	if m.Config.Template || m.Config.Hardware.NumCPU != 2 || m.Config.Hardware.MemoryMB != 4096 || len(disks) != 2 || disks[0] != 20 || disks[1] != 10 {
		t.Errorf("clone in vcsim: template %v, %d CPUs, %d MB, disks %v GiB; want a VM with my-vm-class's 2 CPUs and 4096 MB and the template's 20 and 10 GiB disks",
			m.Config.Template, m.Config.Hardware.NumCPU, m.Config.Hardware.MemoryMB, disks)
	}
	if out := get(`{.status.conditions[?(@.type=="VirtualMachineCreated")].status}`); out != "True" {
		t.Errorf("VirtualMachineCreated %q, want True", out)
	}
	ahci := func() int {
		return len(object.VirtualDeviceList(read().Config.Hardware.Device).SelectByType((*types.VirtualAHCIController)(nil)))
	}
	sataStatus := `{.status.hardware.controllers[?(@.type=="SATA")].busNumber}`

	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "merge", "-p", `{"spec":{"hardware":{"sataControllers":[{"busNumber":0}]}}}`)
	tp.eventually("SATA 0 in status.hardware.controllers", func() bool { return get(sataStatus) == "0" })
	if n := ahci(); n != 1 {
		t.Errorf("%d AHCI controllers in vcsim after the add, want 1", n)
	}

	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "merge", "-p", `{"spec":{"hardware":{"sataControllers":null}}}`)
	tp.eventually("SATA 0 gone from status.hardware.controllers", func() bool { return get(sataStatus) == "" })
	if n := ahci(); n != 0 {
		t.Errorf("%d AHCI controllers in vcsim after the removal, want 0", n)
	}

	// The image disks' volumes name SCSI 0: admission puts their controller back.
	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "json", "-p", `[{"op":"remove","path":"/spec/hardware/scsiControllers/0"}]`)
	if out := get("{.spec.hardware.scsiControllers[*].busNumber}"); out != "0" {
		t.Errorf("spec.hardware.scsiControllers buses %q after removing the image disks' controller, want it kept (0)", out)
	}

	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "json", "-p", `[{"op":"replace","path":"/spec/hardware/scsiControllers/0/type","value":"LsiLogic"}]`)
	storage := func(field string) string {
		return get(`{.status.conditions[?(@.type=="VirtualMachineStorageReady")].` + field + `}`)
	}
	tp.eventually("StorageReady refusing the retype", func() bool { return storage("reason") == "HardwareControllersMismatch" })
	if msg := storage("message"); !strings.Contains(msg, "SCSI controller 0 is ParaVirtual, spec.hardware asks for LsiLogic") || !strings.Contains(msg, "a disk at unit 0") {
		t.Errorf("StorageReady message %q does not say why SCSI controller 0 keeps its type", msg)
	}
	devices = object.VirtualDeviceList(read().Config.Hardware.Device)
	if pv := devices.SelectByType((*types.ParaVirtualSCSIController)(nil)); len(pv) != 1 || len(devices.SelectByType((*types.VirtualDisk)(nil))) != 2 {
		t.Errorf("vcsim after the refused retype: ParaVirtual controllers %d, disks %d; want 1 and 2", len(pv), len(devices.SelectByType((*types.VirtualDisk)(nil))))
	}

	// Back to the controller it has, the VM is storage-ready and powers on.
	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "json", "-p", `[{"op":"replace","path":"/spec/hardware/scsiControllers/0/type","value":"ParaVirtual"}]`)
	tp.eventually("StorageReady True", func() bool { return storage("status") == "True" })
	tp.kubectl("patch", "vm", name, "-n", ns, "--type", "merge", "-p", `{"spec":{"powerState":"PoweredOn"}}`)
	tp.waitPower(name, "PoweredOn")
}

// waitVMImages waits until the images of type VM listed in ns, by their type label, are
// those of the seeded template and VM template item (the gateway seeds them as it starts).
func (tp *topology) waitVMImages(ns string) {
	tp.t.Helper()
	want := []string{inventory.PhotonTemplate, inventory.PhotonVMTX}
	var images []string
	tp.eventuallyReport("the seeded images of type VM", func() bool {
		out, _ := tp.kubectlErr("get", "vmi", "-n", ns, "-l", "image.vmoperator.vmware.com/type=VM", "-o", "jsonpath={.items[*].status.name}")
		images = strings.Fields(out)
		slices.Sort(images)
		return slices.Equal(images, want)
	}, func() string { return fmt.Sprintf("%v, want %v", images, want) })
}

// TestVMTemplateItemDeploy is issue #16's item 6 for a content library VM template (VMTX)
// through the API: a VM from the seeded VM template item's image (named by its display
// name) is the item's deploy, configured with the class's hardware, with the template's
// two disks, and powers on.
func TestVMTemplateItemDeploy(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	const ns, name = "my-namespace", "vmtx-vm"
	tp.waitVMImages(ns)
	tp.apply("apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachine\nmetadata:\n  name: "+name+
		"\nspec:\n  className: my-vm-class\n  imageName: "+inventory.PhotonVMTX+"\n  storageClass: my-storage-class\n  powerState: PoweredOn\n", "")
	tp.waitPower(name, "PoweredOn")

	vm := tp.vm(vc, name)
	var m mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.hardware", "config.template", "config.instanceUuid"}, &m); err != nil {
		t.Fatal(err)
	}
	var disks []int64
	for _, d := range object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		disks = append(disks, d.(*types.VirtualDisk).CapacityInBytes>>30)
	}
	instance := tp.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath={.spec.instanceUUID}")
	if m.Config.Template || m.Config.Hardware.NumCPU != 2 || m.Config.Hardware.MemoryMB != 4096 || !slices.Equal(disks, []int64{20, 10}) || m.Config.InstanceUuid != instance {
		t.Errorf("deployed VM in vcsim: template %v, %d CPUs, %d MB, disks %v GiB, instance UUID %s; want a VM with my-vm-class's 2 CPUs and 4096 MB, the template's 20 and 10 GiB disks and instance UUID %s",
			m.Config.Template, m.Config.Hardware.NumCPU, m.Config.Hardware.MemoryMB, disks, m.Config.InstanceUuid, instance)
	}
}
