package model

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineBootOptions(t *testing.T) {
	boot := func(o VirtualMachineBootOptions) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.BootOptions = &o }
	}
	order := func(devices ...BootableDevice) func(*VirtualMachine) {
		return boot(VirtualMachineBootOptions{BootOrder: devices})
	}
	disk := func(name string) BootableDevice { return BootableDevice{Type: BootDeviceDisk, Name: name} }
	nic := func(name string) BootableDevice { return BootableDevice{Type: BootDeviceNetwork, Name: name} }
	cdrom := BootableDevice{Type: BootDeviceCDRom}
	// The stored object's status reports the boot disk; the VM is desired off, outside G.
	storedOff := func(vm *VirtualMachine) {
		vm.Spec.PowerState = PowerStateOff
		vm.Status.Volumes = []VirtualMachineVolumeStatus{{Name: "my-vm-boot", Type: "Classic"}}
	}
	withCdrom := func(vm *VirtualMachine) {
		vm.Spec.GuestID = "ubuntu64Guest"
		vm.Spec.Hardware.Cdrom = []VirtualMachineCdromSpec{{Name: "cd1", Image: ImageRef{Kind: KindClusterVirtualMachineImage, Name: "vmi-cccc"}}}
	}
	delay := &metav1.Duration{Duration: 10 * time.Second}
	const bo = "spec.bootOptions"
	runVMCases(t, []vmCase{
		{name: "BOOT-1 boot options without order on create", change: boot(VirtualMachineBootOptions{Firmware: FirmwareEFI}), code: 200},
		{name: "BOOT-1 boot order on create", change: order(nic("eth0")), code: 422, path: bo + ".bootOrder", typ: field.ErrorTypeForbidden},
		{name: "BOOT-2 named entries", update: true, stored: storedOff, change: order(disk("my-vm-boot"), nic("eth0")), code: 200},
		{name: "BOOT-3 distinct entries", update: true, stored: storedOff, change: order(nic("eth0"), cdrom), later: withCdrom, code: 200},
		{name: "BOOT-4 network entry naming an interface", update: true, stored: storedOff, change: order(nic("eth0")), code: 200},
		{name: "BOOT-5 disk entry naming a status volume", update: true, stored: storedOff, change: order(disk("my-vm-boot")), code: 200},
		{name: "BOOT-6 CD-ROM entry with a CD-ROM", update: true, stored: storedOff, later: withCdrom, change: order(cdrom), code: 200},
		{name: "BOOT-2 disk entry without name", update: true, stored: storedOff, change: order(disk("")),
			code: 422, path: bo + ".bootOrder[0].name", typ: field.ErrorTypeRequired},
		{name: "BOOT-3 name listed twice", update: true, stored: storedOff, change: order(nic("eth0"), nic("eth0")),
			code: 422, path: bo + ".bootOrder[1]", typ: field.ErrorTypeDuplicate},
		{name: "BOOT-3 two CD-ROM entries", update: true, stored: storedOff, change: order(cdrom, cdrom),
			code: 422, path: bo + ".bootOrder[1]", typ: field.ErrorTypeDuplicate},
		{name: "BOOT-4 network entry naming no interface", update: true, stored: storedOff, change: order(nic("eth9")),
			code: 422, path: bo + ".bootOrder[0]", typ: field.ErrorTypeInvalid},
		{name: "BOOT-5 disk entry naming no status volume", update: true, stored: storedOff, change: order(disk("data")),
			code: 422, path: bo + ".bootOrder[0]", typ: field.ErrorTypeInvalid},
		{name: "BOOT-6 CD-ROM entry without CD-ROMs", update: true, stored: storedOff, change: order(cdrom),
			code: 422, path: bo + ".bootOrder[0]", typ: field.ErrorTypeInvalid},

		{name: "BOOT-7 retry delay with retry enabled", change: boot(VirtualMachineBootOptions{BootRetry: BootOptionEnabled, BootRetryDelay: delay}), code: 200},
		{name: "BOOT-7 retry delay without retry", change: boot(VirtualMachineBootOptions{BootRetryDelay: delay}),
			code: 422, path: bo + ".bootRetry", typ: field.ErrorTypeRequired},
		{name: "BOOT-8 secure boot with EFI", change: boot(VirtualMachineBootOptions{Firmware: FirmwareEFI, EFISecureBoot: BootOptionEnabled}), code: 200},
		{name: "BOOT-8 secure boot with BIOS", change: boot(VirtualMachineBootOptions{Firmware: FirmwareBIOS, EFISecureBoot: BootOptionEnabled}),
			code: 422, path: bo + ".efiSecureBoot", typ: field.ErrorTypeForbidden},
		{name: "BOOT-9 retry Enabled", change: boot(VirtualMachineBootOptions{BootRetry: BootOptionEnabled}), code: 200},
		{name: "BOOT-9 retry sometimes (stage 1)", change: boot(VirtualMachineBootOptions{BootRetry: "Sometimes"}),
			code: 422, path: bo + ".bootRetry", typ: field.ErrorTypeNotSupported},
		{name: "BOOT-10 changed while desired PoweredOff", update: true, stored: storedOff, change: boot(VirtualMachineBootOptions{Firmware: FirmwareEFI}), code: 200},
		{name: "BOOT-10 unchanged under G", update: true, stored: boot(VirtualMachineBootOptions{Firmware: FirmwareEFI}), change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, code: 200},
		{name: "BOOT-10 changed under G", update: true, change: boot(VirtualMachineBootOptions{Firmware: FirmwareEFI}),
			code: 422, path: bo, typ: field.ErrorTypeForbidden},
	})
}

func TestVirtualMachineSnapshotRevert(t *testing.T) {
	const path = "spec.currentSnapshotName"
	revert := func(name string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.CurrentSnapshotName = name }
	}
	node := func(vm *VirtualMachine) { setLabel(vm, LabelCAPVClusterRole, "worker") }
	runVMCases(t, []vmCase{
		{name: "SNAP-1 no snapshot on create", code: 200},
		{name: "SNAP-1 snapshot on create", change: revert("snap-1"), code: 422, path: path, typ: field.ErrorTypeForbidden},
		{name: "SNAP-2 revert requested", update: true, change: revert("snap-1"), code: 200},
		{name: "SNAP-2 whitespace name", update: true, change: revert("  "), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "SNAP-3 pending revert kept", update: true, later: revert("snap-1"), change: revert("snap-1"), code: 200},
		{name: "SNAP-3 another revert while one is pending", update: true, later: revert("snap-1"), change: revert("snap-2"),
			code: 422, path: path, typ: field.ErrorTypeForbidden},
		{name: "SNAP-4 Kubernetes node without revert", update: true, stored: node, change: func(vm *VirtualMachine) { setLabel(vm, "app", "web") }, code: 200},
		{name: "SNAP-4 revert of a Kubernetes node", update: true, stored: node, change: revert("snap-1"), code: 422, path: path, typ: field.ErrorTypeForbidden},
		{name: "SNAP-4 revert of a capw node", update: true, stored: func(vm *VirtualMachine) { setLabel(vm, LabelCAPWClusterRole, "cp") },
			change: revert("snap-1"), code: 422, path: path, typ: field.ErrorTypeForbidden},
	})
}
