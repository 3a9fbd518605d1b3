package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testClass(change func(c *VirtualMachineClass)) *VirtualMachineClass {
	c := &VirtualMachineClass{ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: "ns"}}
	if change != nil {
		change(c)
	}
	return c
}

// classResources sets requests and limits; "" leaves an amount unset.
func classResources(reqCPU, limCPU, reqMem, limMem string) func(c *VirtualMachineClass) {
	q := func(s string) *resource.Quantity {
		if s == "" {
			return nil
		}
		v := resource.MustParse(s)
		return &v
	}
	return func(c *VirtualMachineClass) {
		c.Spec.Policies = &VirtualMachineClassPolicies{Resources: &VirtualMachineClassResources{
			Requests: &VirtualMachineResourceSpec{Cpu: q(reqCPU), Memory: q(reqMem)},
			Limits:   &VirtualMachineResourceSpec{Cpu: q(limCPU), Memory: q(limMem)},
		}}
	}
}

func classConfigSpec(raw string) func(c *VirtualMachineClass) {
	return func(c *VirtualMachineClass) { c.Spec.ConfigSpec = json.RawMessage(raw) }
}

func admitClass(t *testing.T, c, old *VirtualMachineClass) (int, []string) {
	t.Helper()
	code, errs := admitKind(t, "VirtualMachineClass", c, old, DefaultVirtualMachineClass, ValidateVirtualMachineClass)
	return code, ruleErrors(errs)
}

func TestVirtualMachineClassRules(t *testing.T) {
	tests := []struct {
		name     string
		obj, old *VirtualMachineClass // old nil: create
		wantCode int
		wantErrs []string
	}{
		{"9.1.2 requests within limits", testClass(classResources("1", "2", "1Gi", "1Gi")), nil, 200, nil},
		{"9.1.2 unlimited request", testClass(classResources("4", "0", "8Gi", "")), nil, 200, nil},
		{"9.1.2 millicores within a core", testClass(classResources("500m", "1", "", "")), nil, 200, nil},
		{"9.1.2 cpu request above limit", testClass(classResources("1500m", "1", "", "")), nil, 422,
			[]string{`FieldValueInvalid spec.policies.resources.requests.cpu "1500m"`}},
		{"9.1.2 memory request above limit", testClass(classResources("", "", "2Gi", "1024Mi")), nil, 422,
			[]string{`FieldValueInvalid spec.policies.resources.requests.memory "2Gi"`}},
		{"9.1.2 both above limit", testClass(classResources("3", "2", "2Gi", "1Gi")), nil, 422,
			[]string{`FieldValueInvalid spec.policies.resources.requests.cpu "3"`,
				`FieldValueInvalid spec.policies.resources.requests.memory "2Gi"`}},
		{"9.1.2 updates are not validated", testClass(classResources("3", "2", "", "")), testClass(nil), 200, nil},
		{"configSpec with extraConfig, a vGPU and CPU hot-add", testClass(classConfigSpec(`{"_typeName":"VirtualMachineConfigSpec",
			"cpuHotAddEnabled":true,"extraConfig":[{"_typeName":"OptionValue","key":"a","value":{"_typeName":"string","_value":"b"}}],
			"deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualPCIPassthrough","key":-200,
			"backing":{"_typeName":"VirtualPCIPassthroughVmiopBackingInfo","vgpu":"grid_p40-1q"}}}]}`)), nil, 200, nil},
		{"configSpec that is no ConfigSpec", testClass(classConfigSpec(`{"_typeName":"VirtualMachineConfigSpec","numCPUs":"two"}`)), nil, 422,
			[]string{`FieldValueInvalid spec.configSpec ""`}},
		{"configSpec whose decoding panics", testClass(classConfigSpec(`{"_typeName":"VirtualMachineConfigSpec",
			"extraConfig":[{"_typeName":"OptionValue","key":"a","value":{"_typeName":"string","value":"b"}}]}`)), nil, 422,
			[]string{`FieldValueInvalid spec.configSpec ""`}},
		{"configSpec checked on update too", testClass(classConfigSpec(`[1]`)), testClass(nil), 422,
			[]string{`FieldValueInvalid spec.configSpec ""`}},
		{"configSpec adding a disk, removing a device, naming the VM", testClass(classConfigSpec(`{"_typeName":"VirtualMachineConfigSpec","name":"x",
			"deviceChange":[{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualDisk","key":-1}},
			{"_typeName":"VirtualDeviceConfigSpec","operation":"remove","device":{"_typeName":"VirtualVmxnet3","key":4000}}]}`)), nil, 422,
			[]string{`FieldValueForbidden spec.configSpec.name`,
				`FieldValueInvalid spec.configSpec.deviceChange[0].device._typeName "VirtualDisk"`,
				`FieldValueNotSupported spec.configSpec.deviceChange[1].operation`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, errs := admitClass(t, tt.obj, tt.old)
			if code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantErrs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVirtualMachineClassControllerName(t *testing.T) {
	withController := func(name string) *VirtualMachineClass {
		return testClass(func(c *VirtualMachineClass) { c.Spec.ControllerName = name })
	}
	tests := []struct {
		name     string
		obj, old *VirtualMachineClass
		want     string
	}{
		{"9.1.1 cleared on update keeps the stored value", withController(""), withController("vmop"), "vmop"},
		{"9.1.1 changed on update is taken", withController("other"), withController("vmop"), "other"},
		{"9.1.1 empty on create stays empty", withController(""), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, errs := admitClass(t, tt.obj, tt.old); code != 200 {
				t.Fatalf("code = %d %v, want 200", code, errs)
			}
			if got := tt.obj.Spec.ControllerName; got != tt.want {
				t.Errorf("controllerName = %q, want %q", got, tt.want)
			}
		})
	}
}
