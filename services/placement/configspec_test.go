package placement

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// The create spec carries the spec's identity and guest, names the object and the applied
// class in ExtraConfig and raises the hardware version only above the image's; it survives
// the XML encoding the deploy uses.
func TestCreateSpecXML(t *testing.T) {
	spec := model.VirtualMachineSpec{BiosUUID: "b-1", InstanceUUID: "i-1", GuestID: "ubuntu64Guest", MinHardwareVersion: 21}
	cls := &class{applied: model.AppliedClass{Name: "c", UID: "c-uid", Generation: 3}, hw: vcenter.ClassHardware{CPUs: 2, MemoryMB: 4096}}
	cs := createSpec(vmIdentity{"ns", "vm", "uid-1"}, spec, cls, 0, 19)
	b64, err := configSpecXML(cs)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var got *types.VirtualMachineConfigSpec
	dec := xml.NewDecoder(bytes.NewReader(raw))
	dec.TypeFunc = types.TypeFunc()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	want := types.VirtualMachineConfigSpec{NumCPUs: 2, MemoryMB: 4096, Uuid: "b-1", InstanceUuid: "i-1", GuestId: "ubuntu64Guest",
		Version: "vmx-21", ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: vcenter.KeyObject, Value: "ns/vm"},
			&types.OptionValue{Key: vcenter.KeyUID, Value: "uid-1"},
			&types.OptionValue{Key: vcenter.KeyAppliedClass, Value: `{"name":"c","uid":"c-uid","generation":3}`},
			&types.OptionValue{Key: vcenter.KeyClassExtraConfig, Value: `[]`},
		}}
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("decoded config spec (-want +got):\n%s", d)
	}
	if v := createSpec(vmIdentity{}, model.VirtualMachineSpec{MinHardwareVersion: 17}, &class{}, 0, 19).Version; v != "" {
		t.Errorf("version %q for a minimum below the image's, want the image's (unset)", v)
	}
	claim := model.VirtualMachineSpec{Volumes: []model.VirtualMachineVolume{{Name: "data",
		PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: "my-pvc"}}}}
	if v := createSpec(vmIdentity{}, claim, &class{}, 0, 13).Version; v != "vmx-15" {
		t.Errorf("version %q for a vmx-13 image and a claim, want vmx-15 (api-rules §7.12)", v)
	}
	if v := createSpec(vmIdentity{}, claim, &class{}, 0, 19).Version; v != "" {
		t.Errorf("version %q for a vmx-19 image and a claim, want the image's (unset)", v)
	}
}

// The class's whole ConfigSpec is merged: settings, extraConfig (recorded by key), the
// vGPU of its ConfigSpec and the dynamic DirectPath I/O device of spec.hardware.devices,
// whose memory is then reserved whole; the hardware version is raised for them; the
// spec's firmware wins over the class's.
func TestCreateSpecMergesClassConfigSpec(t *testing.T) {
	hw, err := vcenter.ClassHardwareOf(model.VirtualMachineClassSpec{
		ConfigSpec: json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","cpuHotAddEnabled":true,"nestedHVEnabled":true,"firmware":"bios",
			"latencySensitivity":{"_typeName":"LatencySensitivity","level":"high"},
			"extraConfig":[{"_typeName":"OptionValue","key":"a.b","value":{"_typeName":"string","_value":"c"}}],
			"deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualPCIPassthrough","key":-50,
			"backing":{"_typeName":"VirtualPCIPassthroughVmiopBackingInfo","vgpu":"grid_p40-1q"}}},
			{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualVmxnet3","key":-100}}]}`),
		Hardware: &model.VirtualMachineClassHardware{Cpus: 2, Devices: &model.VirtualDevices{
			VGPUDevices:                []model.VGPUDevice{{ProfileName: "grid_p40-1q"}},
			DynamicDirectPathIODevices: []model.DynamicDirectPathIODevice{{VendorID: 0x10de, DeviceID: 0x1eb8, CustomLabel: "t4"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := model.VirtualMachineSpec{BootOptions: &model.VirtualMachineBootOptions{Firmware: model.FirmwareEFI}}
	cs := createSpec(vmIdentity{"ns", "vm", "uid-1"}, spec, &class{hw: hw}, 0, 15)
	if *cs.CpuHotAddEnabled != true || *cs.NestedHVEnabled != true || cs.LatencySensitivity.Level != "high" || cs.NumCPUs != 2 {
		t.Errorf("settings not merged: %+v", cs)
	}
	if cs.Firmware != "efi" {
		t.Errorf("firmware %q, want the spec's efi", cs.Firmware)
	}
	if cs.MemoryReservationLockedToMax == nil || !*cs.MemoryReservationLockedToMax {
		t.Error("memory of a VM with passthrough devices is not reserved whole")
	}
	if cs.Version != "vmx-17" {
		t.Errorf("version %q, want vmx-17 for passthrough devices on a vmx-15 image", cs.Version)
	}
	var got []string
	for _, dc := range cs.DeviceChange {
		d := dc.GetVirtualDeviceConfigSpec()
		switch b := d.Device.GetVirtualDevice().Backing.(type) {
		case *types.VirtualPCIPassthroughVmiopBackingInfo:
			got = append(got, "vgpu "+b.Vgpu)
		case *types.VirtualPCIPassthroughDynamicBackingInfo:
			got = append(got, "dynamic "+b.CustomLabel)
		default:
			got = append(got, fmt.Sprintf("%T", d.Device))
		}
	}
	if d := cmp.Diff([]string{"vgpu grid_p40-1q", "dynamic t4"}, got); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
	keys := map[string]any{}
	for _, o := range cs.ExtraConfig {
		keys[o.GetOptionValue().Key] = o.GetOptionValue().Value
	}
	if keys["a.b"] != "c" || keys[vcenter.KeyClassExtraConfig] != `["a.b"]` {
		t.Errorf("extraConfig %v lacks the class's key or its record", keys)
	}
	if _, err := configSpecXML(cs); err != nil {
		t.Errorf("the deploy cannot encode the merged spec: %v", err)
	}
}
