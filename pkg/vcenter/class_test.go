package vcenter_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

func TestClassHardware(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	alloc := func(reservation, limit int64) *types.ResourceAllocationInfo {
		return &types.ResourceAllocationInfo{Reservation: types.NewInt64(reservation), Limit: types.NewInt64(limit)}
	}
	tests := []struct {
		name    string
		spec    model.VirtualMachineClassSpec
		hostMHz int64
		want    types.VirtualMachineConfigSpec
		wantErr bool
	}{{
		name: "seed class: CPU and memory from hardware, allocations from the ConfigSpec",
		spec: model.VirtualMachineClassSpec{
			Hardware:   &model.VirtualMachineClassHardware{Cpus: 2, Memory: q("4Gi")},
			ConfigSpec: json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","cpuAllocation":{"_typeName":"ResourceAllocationInfo","limit":400,"reservation":200},"memoryAllocation":{"_typeName":"ResourceAllocationInfo","limit":2048,"reservation":1024}}`),
		},
		want: types.VirtualMachineConfigSpec{NumCPUs: 2, MemoryMB: 4096, CpuAllocation: alloc(200, 400), MemoryAllocation: alloc(1024, 2048)},
	}, {
		name: "the ConfigSpec's numCPUs and memoryMB win over hardware",
		spec: model.VirtualMachineClassSpec{
			Hardware:   &model.VirtualMachineClassHardware{Cpus: 2, Memory: q("4Gi")},
			ConfigSpec: json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","numCPUs":4,"memoryMB":16384}`),
		},
		want: types.VirtualMachineConfigSpec{NumCPUs: 4, MemoryMB: 16384},
	}, {
		name: "policies: CPU cores at the host's clock, memory in MiB",
		spec: model.VirtualMachineClassSpec{
			Hardware: &model.VirtualMachineClassHardware{Cpus: 2, Memory: q("8Gi")},
			Policies: &model.VirtualMachineClassPolicies{Resources: &model.VirtualMachineClassResources{
				Requests: &model.VirtualMachineResourceSpec{Cpu: q("500m"), Memory: q("1Gi")},
				Limits:   &model.VirtualMachineResourceSpec{Cpu: q("2"), Memory: q("8Gi")},
			}},
		},
		hostMHz: 2000,
		want:    types.VirtualMachineConfigSpec{NumCPUs: 2, MemoryMB: 8192, CpuAllocation: alloc(1000, 4000), MemoryAllocation: alloc(1024, 8192)},
	}, {
		name: "memory rounds up to whole MiB",
		spec: model.VirtualMachineClassSpec{Hardware: &model.VirtualMachineClassHardware{Cpus: 1, Memory: q("1000Ki")}},
		want: types.VirtualMachineConfigSpec{NumCPUs: 1, MemoryMB: 1},
	}, {
		name:    "a ConfigSpec that is not one",
		spec:    model.VirtualMachineClassSpec{ConfigSpec: json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","numCPUs":"many"}`)},
		wantErr: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hw, err := vcenter.ClassHardwareOf(tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			got := hw.ConfigSpec(tc.hostMHz)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("config spec (-want +got):\n%s", d)
			}
		})
	}
}
