package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var configSpecPath = field.NewPath("spec", "configSpec")

// ClassConfigSpec decodes a class's spec.configSpec (vim25 JSON with _typeName
// discriminators, as VM Operator stores it) and checks that its VMs can be given all of
// it: every device it adds is one a service gives the VM (network adapters: network;
// a virtual TPM: crypto; vGPUs and dynamic DirectPath I/O devices: the class merge), and
// it sets nothing that comes from the VirtualMachine itself. An empty configSpec is a zero
// spec.
func ClassConfigSpec(raw json.RawMessage) (types.VirtualMachineConfigSpec, field.ErrorList) {
	var cs types.VirtualMachineConfigSpec
	if len(raw) == 0 || string(raw) == "null" {
		return cs, nil
	}
	if err := decodeConfigSpec(raw, &cs); err != nil {
		return types.VirtualMachineConfigSpec{}, field.ErrorList{field.Invalid(configSpecPath, "", "is not a vSphere VirtualMachineConfigSpec: "+err.Error())}
	}
	var errs field.ErrorList
	for _, f := range vmOwnedConfigFields(cs) {
		errs = append(errs, field.Forbidden(configSpecPath.Child(f.name), f.why))
	}
	for i, o := range cs.ExtraConfig {
		if k := o.GetOptionValue().Key; strings.HasPrefix(k, vmopExtraConfigPrefix) {
			errs = append(errs, field.Invalid(configSpecPath.Child("extraConfig").Index(i).Child("key"), k, "keys starting with "+vmopExtraConfigPrefix+" are vmop's records"))
		}
	}
	for i, dc := range cs.DeviceChange {
		p := configSpecPath.Child("deviceChange").Index(i)
		d := dc.GetVirtualDeviceConfigSpec()
		if d.Operation != "" && d.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			errs = append(errs, field.NotSupported(p.Child("operation"), d.Operation, []string{string(types.VirtualDeviceConfigSpecOperationAdd)}))
			continue
		}
		if d.Device == nil {
			errs = append(errs, field.Required(p.Child("device"), "a device change must name its device"))
			continue
		}
		if why := unsupportedClassDevice(d.Device); why != "" {
			errs = append(errs, field.Invalid(p.Child("device", "_typeName"), reflect.TypeOf(d.Device).Elem().Name(), why))
		}
	}
	return cs, errs
}

// vmopExtraConfigPrefix starts the ExtraConfig keys vmop records its state in.
const vmopExtraConfigPrefix = "vmop."

type ownedField struct{ name, why string }

// vmOwnedConfigFields are the fields cs sets that a VM gets from elsewhere than its class.
func vmOwnedConfigFields(cs types.VirtualMachineConfigSpec) []ownedField {
	var out []ownedField
	add := func(set bool, name, why string) {
		if set {
			out = append(out, ownedField{name, why})
		}
	}
	add(cs.Name != "", "name", "a VM is named by its object")
	add(cs.Uuid != "", "uuid", "comes from the VM's spec.biosUUID")
	add(cs.InstanceUuid != "", "instanceUuid", "comes from the VM's spec.instanceUUID")
	add(cs.Files != nil, "files", "a VM's files are on the datastore of its storage class")
	add(len(cs.VmProfile) > 0, "vmProfile", "a VM's storage policy comes from its storage class")
	add(cs.Crypto != nil, "crypto", "a VM's encryption comes from its spec.crypto and storage class")
	add(cs.VAppConfig != nil, "vAppConfig", "vApp properties come from the VM's spec.bootstrap.vAppConfig")
	return out
}

// unsupportedClassDevice says why a class may not add d, "" when it may.
func unsupportedClassDevice(d types.BaseVirtualDevice) string {
	switch d := d.(type) {
	case types.BaseVirtualEthernetCard, *types.VirtualTPM:
		return ""
	case *types.VirtualPCIPassthrough:
		switch d.Backing.(type) {
		case *types.VirtualPCIPassthroughVmiopBackingInfo, *types.VirtualPCIPassthroughDynamicBackingInfo:
			return ""
		}
		return "a PCI passthrough device of a class is a vGPU (VirtualPCIPassthroughVmiopBackingInfo) or a dynamic DirectPath I/O device (VirtualPCIPassthroughDynamicBackingInfo)"
	case *types.VirtualDisk, types.BaseVirtualController, *types.VirtualCdrom:
		return "disks, controllers and CD-ROMs come from the image and the VM's spec.volumes, spec.hardware and spec.advanced"
	}
	return "a class adds network adapters, a virtual TPM, vGPUs and dynamic DirectPath I/O devices only"
}

// DecodeConfigSpec decodes a class's spec.configSpec without checking what it asks
// (ClassConfigSpec does, at admission); an empty one is a zero spec.
func DecodeConfigSpec(raw json.RawMessage) (types.VirtualMachineConfigSpec, error) {
	var cs types.VirtualMachineConfigSpec
	if len(raw) == 0 || string(raw) == "null" {
		return cs, nil
	}
	err := decodeConfigSpec(raw, &cs)
	return cs, err
}

// decodeConfigSpec decodes vim25 JSON. govmomi's decoder panics on some malformed
// discriminated values (a {"_typeName":"string","value":...} instead of "_value"): that
// is bad input, not a crash.
func decodeConfigSpec(raw []byte, cs *types.VirtualMachineConfigSpec) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed vim25 JSON: %v", r)
		}
	}()
	return types.NewJSONDecoder(bytes.NewReader(raw)).Decode(cs)
}
