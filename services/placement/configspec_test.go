package placement

import (
	"bytes"
	"encoding/base64"
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
		}}
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("decoded config spec (-want +got):\n%s", d)
	}
	if v := createSpec(vmIdentity{}, model.VirtualMachineSpec{MinHardwareVersion: 17}, &class{}, 0, 19).Version; v != "" {
		t.Errorf("version %q for a minimum below the image's, want the image's (unset)", v)
	}
}
