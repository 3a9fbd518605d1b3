package placement

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
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
			hw, err := classHardwareOf(tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			got := createSpec(vmIdentity{"ns", "vm", "uid"}, model.VirtualMachineSpec{}, hw, tc.hostMHz, 19)
			got.ExtraConfig = nil
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("config spec (-want +got):\n%s", d)
			}
		})
	}
}

// The create spec carries the spec's identity and guest, names the object in ExtraConfig
// and raises the hardware version only above the image's; it survives the XML encoding
// the deploy uses.
func TestCreateSpecXML(t *testing.T) {
	spec := model.VirtualMachineSpec{BiosUUID: "b-1", InstanceUUID: "i-1", GuestID: "ubuntu64Guest", MinHardwareVersion: 21}
	cs := createSpec(vmIdentity{"ns", "vm", "uid-1"}, spec, classHardware{cpus: 2, memoryMB: 4096}, 0, 19)
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
		}}
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("decoded config spec (-want +got):\n%s", d)
	}
	if v := createSpec(vmIdentity{}, model.VirtualMachineSpec{MinHardwareVersion: 17}, classHardware{}, 0, 19).Version; v != "" {
		t.Errorf("version %q for a minimum below the image's, want the image's (unset)", v)
	}
}
