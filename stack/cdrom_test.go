package main

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// isoVM is the seed's Deploy a VM with ISO: one CD-ROM, connected, and a 20Gi boot disk.
const isoVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-iso-vm
  namespace: my-namespace
spec:
  className: my-vm-class
  storageClass: my-storage-class
  guestID: vmwarePhoton64Guest
  hardware:
    cdrom:
    - name: cdrom1
      image:
        kind: VirtualMachineImage
        name: %s
      connected: true
      allowGuestControl: true
  advanced:
    bootDiskCapacity: 20Gi
`

// TestISOVM walks the ISO flow with kubectl: both seed commands list the ISO images by
// their type label; a VM of photonos-5-x64-iso powers on with a CD-ROM on IDE 0:0 backed
// by the ISO file, connected, and a 20 GiB disk; connected: false disconnects it;
// swapping the image (while off) changes the backing; removing the entry removes it.
func TestISOVM(t *testing.T) {
	tp := startTopology(t)
	isoImages := func(args ...string) map[string]string {
		out := tp.kubectl(append(args, "-l", "image.vmoperator.vmware.com/type=ISO", "-o",
			`jsonpath={range .items[*]}{.status.name}={.metadata.name}{"\n"}{end}`)...)
		names := map[string]string{}
		for _, line := range strings.Fields(out) {
			item, name, _ := strings.Cut(line, "=")
			names[item] = name
		}
		return names
	}
	namespaced, cluster := isoImages("get", "-n", "my-namespace", "vmi"), isoImages("get", "cvmi")
	if len(namespaced) != 1 || namespaced[inventory.PhotonISO] == "" {
		t.Fatalf("ISO vmi of my-namespace %v, want only %s", namespaced, inventory.PhotonISO)
	}
	if len(cluster) != 1 || cluster[inventory.UbuntuISO] == "" {
		t.Fatalf("ISO cvmi %v, want only %s", cluster, inventory.UbuntuISO)
	}

	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	tp.apply(fmt.Sprintf(isoVM, namespaced[inventory.PhotonISO]), "")
	tp.waitPower("my-iso-vm", "PoweredOn")
	vm := tp.vm(vc, "my-iso-vm")
	cdrom := func() *types.VirtualCdrom {
		var m mo.VirtualMachine
		if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.hardware.device"}, &m); err != nil {
			t.Fatal(err)
		}
		devices := object.VirtualDeviceList(m.Config.Hardware.Device)
		cdroms := devices.SelectByType((*types.VirtualCdrom)(nil))
		if len(cdroms) > 1 {
			t.Fatalf("%d CD-ROMs, want at most 1", len(cdroms))
		}
		if len(cdroms) == 0 {
			return nil
		}
		d := cdroms[0].(*types.VirtualCdrom)
		ide, ok := devices.FindByKey(d.ControllerKey).(*types.VirtualIDEController)
		if !ok || ide.BusNumber != 0 || d.UnitNumber == nil || *d.UnitNumber != 0 {
			t.Fatalf("CD-ROM on controller %d unit %v, want IDE 0:0", d.ControllerKey, d.UnitNumber)
		}
		return d
	}
	iso := func(d *types.VirtualCdrom) string {
		if b, ok := d.Backing.(*types.VirtualCdromIsoBackingInfo); ok {
			return path.Base(b.FileName)
		}
		return ""
	}
	d := cdrom()
	if d == nil || iso(d) != inventory.PhotonISO+".iso" || !d.Connectable.Connected || !d.Connectable.AllowGuestControl {
		t.Fatalf("CD-ROM %+v, want %s.iso connected with guest control", d, inventory.PhotonISO)
	}
	var m mo.VirtualMachine
	if err := vm.Properties(t.Context(), vm.Reference(), []string{"config.hardware.device"}, &m); err != nil {
		t.Fatal(err)
	}
	disks := object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) != 1 || disks[0].(*types.VirtualDisk).CapacityInBytes != 20<<30 {
		t.Fatalf("disks %v, want one of 20 GiB", disks)
	}
	tp.eventually("the CD-ROM in status.hardware", func() bool {
		out := tp.kubectl("get", "vm", "my-iso-vm", "-n", "my-namespace", "-o",
			`jsonpath={.status.hardware.controllers[?(@.type=="IDE")].devices[?(@.type=="CDROM")].name}`)
		return out == "cdrom1"
	})

	patch := func(ops string) {
		tp.kubectl("patch", "vm", "my-iso-vm", "-n", "my-namespace", "--type=json", "-p", ops)
	}
	patch(`[{"op":"replace","path":"/spec/hardware/cdrom/0/connected","value":false}]`)
	tp.eventually("the CD-ROM disconnected", func() bool {
		d := cdrom()
		return d != nil && !d.Connectable.Connected && !d.Connectable.StartConnected
	})

	tp.kubectl("patch", "vm", "my-iso-vm", "-n", "my-namespace", "--type=merge", "-p", `{"spec":{"powerState":"PoweredOff"}}`)
	tp.waitPower("my-iso-vm", "PoweredOff")
	patch(fmt.Sprintf(`[{"op":"replace","path":"/spec/hardware/cdrom/0/image","value":{"kind":"ClusterVirtualMachineImage","name":%q}}]`, cluster[inventory.UbuntuISO]))
	tp.eventually("the CD-ROM backed by the new image", func() bool {
		d := cdrom()
		return d != nil && iso(d) == inventory.UbuntuISO+".iso"
	})

	patch(`[{"op":"remove","path":"/spec/hardware/cdrom/0"}]`)
	tp.eventually("the CD-ROM removed", func() bool { return cdrom() == nil })

	// Bad input: two CD-ROMs of one image (whatever their kinds) are refused at
	// admission; a CD-ROM of an OVF image is a condition, the VM gets no CD-ROM and does
	// not power on.
	photon, vmi, cvmi := namespaced[inventory.PhotonISO], "VirtualMachineImage", "ClusterVirtualMachineImage"
	out, err := tp.kubectlCtx(t.Context(), []byte(fmt.Sprintf(cdromVM, "twice", "", vmi, photon, cvmi, photon)), "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "spec.hardware.cdrom[1].image.name: Duplicate value") {
		t.Errorf("two CD-ROMs of one image: %v\n%s\nwant a Duplicate error of spec.hardware.cdrom[1].image.name", err, out)
	}
	tp.apply(fmt.Sprintf(cdromVM, "ovf-cdrom", "imageName: "+inventory.SeedImageName, vmi, inventory.SeedImageName, vmi, photon), "")
	tp.eventually("the OVF CD-ROM refused by a condition", func() bool {
		return strings.Contains(tp.condition("ovf-cdrom", "VirtualMachineHardwareCDROMVerified"), `"OVF"`) &&
			strings.HasPrefix(tp.condition("ovf-cdrom", "VirtualMachineStorageReady"), "False HardwareCDROMMismatch")
	})
	ovf := tp.inVCenter(vc, "ovf-cdrom")
	if n := len(object.VirtualDeviceList(ovf.Config.Hardware.Device).SelectByType((*types.VirtualCdrom)(nil))); n != 0 || ovf.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("the VM with an OVF CD-ROM has %d CD-ROMs and is %s, want none and powered off", n, ovf.Runtime.PowerState)
	}
}

// cdromVM is a VM (name, an imageName line or nothing) with CD-ROMs of two images (kind
// and name of each).
const cdromVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: %s
  namespace: my-namespace
spec:
  className: my-vm-class
  storageClass: my-storage-class
  guestID: vmwarePhoton64Guest
  %s
  hardware:
    cdrom:
    - {name: cdrom1, image: {kind: %s, name: %s}}
    - {name: cdrom2, image: {kind: %s, name: %s}}
`
