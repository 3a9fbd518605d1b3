package network

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
)

func TestClassAdapters(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []string
		err  bool
	}{
		{"none", ``, nil, false},
		{"no devices", `{"_typeName":"VirtualMachineConfigSpec","numCPUs":2}`, nil, false},
		{"seed example", `{"_typeName":"VirtualMachineConfigSpec","deviceChange":[
			{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualE1000","key":-100}},
			{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"ParaVirtualSCSIController","key":-101}},
			{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualVmxnet2","key":-200}}]}`,
			[]string{"VirtualE1000", "VirtualVmxnet2"}, false},
		{"not an object", `[1]`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adapters, err := classAdapters(json.RawMessage(tt.spec))
			var got []string
			for _, d := range adapters {
				got = append(got, adapterType(d))
			}
			if (err != nil) != tt.err || !cmp.Equal(got, tt.want) {
				t.Errorf("classAdapters = %v, %v; want %v (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestNICChanges(t *testing.T) {
	vmNet := &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: "VM Network"},
		Network:                        &types.ManagedObjectReference{Type: "Network", Value: "network-1"},
	}
	otherNet := &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: "other"},
		Network:                        &types.ManagedObjectReference{Type: "Network", Value: "network-2"},
	}
	card := func(d types.BaseVirtualDevice, key int32, b types.BaseVirtualDeviceBackingInfo) types.BaseVirtualDevice {
		c := d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		c.Key, c.Backing = key, b
		return d
	}
	want := func(adapter string, b types.BaseVirtualDeviceBackingInfo) wantNIC {
		return wantNIC{iface: "eth0", adapter: adapter, backing: b, mac: "00:50:56:00:00:07"}
	}
	// fixed is w for an interface with macAddr, whose adapter the reconcile gives that MAC.
	fixed := func(w wantNIC, mac string) wantNIC {
		w.fixedMAC, w.mac = mac, mac
		return w
	}
	withMAC := func(d types.BaseVirtualDevice, mac string) types.BaseVirtualDevice {
		d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress = mac
		return d
	}
	type change struct {
		Op   types.VirtualDeviceConfigSpecOperation
		Key  int32
		Kind string
		MAC  string // of an added adapter
	}
	tests := []struct {
		name       string
		have       []types.BaseVirtualDevice
		want       []wantNIC
		off        bool
		changes    []change
		hasProblem bool
	}{
		{"matches", []types.BaseVirtualDevice{card(&types.VirtualVmxnet3{}, 4000, vmNet)}, []wantNIC{want("VirtualVmxnet3", vmNet)}, true, nil, false},
		{"other network", []types.BaseVirtualDevice{card(&types.VirtualVmxnet3{}, 4000, otherNet)}, []wantNIC{want("VirtualVmxnet3", vmNet)}, false,
			[]change{{types.VirtualDeviceConfigSpecOperationEdit, 4000, "VirtualVmxnet3", ""}}, false},
		{"missing", nil, []wantNIC{want("VirtualE1000", vmNet)}, false,
			[]change{{types.VirtualDeviceConfigSpecOperationAdd, -1, "VirtualE1000", "00:50:56:00:00:07"}}, false},
		{"extra", []types.BaseVirtualDevice{card(&types.VirtualVmxnet3{}, 4000, vmNet)}, nil, false,
			[]change{{types.VirtualDeviceConfigSpecOperationRemove, 4000, "VirtualVmxnet3", ""}}, false},
		{"wrong type while off: replaced with the ones after it", []types.BaseVirtualDevice{
			card(&types.VirtualVmxnet3{}, 4000, vmNet), card(&types.VirtualVmxnet3{}, 4001, vmNet),
		}, []wantNIC{want("VirtualE1000", vmNet), want("VirtualVmxnet3", vmNet)}, true, []change{
			{types.VirtualDeviceConfigSpecOperationRemove, 4000, "VirtualVmxnet3", ""},
			{types.VirtualDeviceConfigSpecOperationRemove, 4001, "VirtualVmxnet3", ""},
			{types.VirtualDeviceConfigSpecOperationAdd, -1, "VirtualE1000", "00:50:56:00:00:07"},
			{types.VirtualDeviceConfigSpecOperationAdd, -2, "VirtualVmxnet3", "00:50:56:00:00:07"},
		}, false},
		{"wrong type while on: left, said", []types.BaseVirtualDevice{card(&types.VirtualVmxnet3{}, 4000, vmNet)},
			[]wantNIC{want("VirtualE1000", vmNet)}, false, nil, true},
		{"another MAC than macAddr while off: replaced by one with it", []types.BaseVirtualDevice{withMAC(card(&types.VirtualVmxnet3{}, 4000, vmNet), "00:0c:29:aa:bb:cc")},
			[]wantNIC{fixed(want("VirtualVmxnet3", vmNet), "00:50:56:3a:bb:cc")}, true, []change{
				{types.VirtualDeviceConfigSpecOperationRemove, 4000, "VirtualVmxnet3", ""},
				{types.VirtualDeviceConfigSpecOperationAdd, -1, "VirtualVmxnet3", "00:50:56:3a:bb:cc"},
			}, false},
		{"another MAC than macAddr while on: left, said", []types.BaseVirtualDevice{withMAC(card(&types.VirtualVmxnet3{}, 4000, vmNet), "00:0c:29:aa:bb:cc")},
			[]wantNIC{fixed(want("VirtualVmxnet3", vmNet), "00:50:56:3a:bb:cc")}, false, nil, true},
		{"macAddr's MAC, in another case: kept", []types.BaseVirtualDevice{withMAC(card(&types.VirtualVmxnet3{}, 4000, vmNet), "00:50:56:3A:BB:CC")},
			[]wantNIC{fixed(want("VirtualVmxnet3", vmNet), "00:50:56:3a:bb:cc")}, false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep, problem := keptAdapters(tt.have, tt.want, tt.off)
			changes, after := nicChanges(tt.have, tt.want, keep)
			var got []change
			for _, c := range changes {
				s := c.GetVirtualDeviceConfigSpec()
				var mac string
				if s.Operation == types.VirtualDeviceConfigSpecOperationAdd {
					mac = s.Device.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress
				}
				got = append(got, change{s.Operation, s.Device.GetVirtualDevice().Key, adapterType(s.Device), mac})
			}
			if diff := cmp.Diff(tt.changes, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			// after stands for the interfaces in order: one adapter each, of the wanted type
			// unless the VM is on and the replacement waits.
			if len(after) != len(tt.want) {
				t.Fatalf("%d adapters after the changes, want %d", len(after), len(tt.want))
			}
			for i, d := range after {
				if adapterType(d) != tt.want[i].adapter && !tt.hasProblem {
					t.Errorf("adapter %d after the changes is a %s, want %s", i, adapterType(d), tt.want[i].adapter)
				}
			}
			if (problem != "") != tt.hasProblem {
				t.Errorf("problem = %q, want one: %v", problem, tt.hasProblem)
			}
		})
	}
}

// A class's SR-IOV adapter reaches the VM with what the class sets of it (its physical
// function), and with the VM's key, network and MAC; the class's copy stays as it was.
func TestClassSRIOVAdapterKeepsItsPhysicalFunction(t *testing.T) {
	adapters, err := classAdapters(json.RawMessage(`{"_typeName":"VirtualMachineConfigSpec","deviceChange":[
		{"_typeName":"VirtualDeviceConfigSpec","operation":"add","device":{"_typeName":"VirtualSriovEthernetCard","key":-100,
			"allowGuestOSMtuChange":true,
			"sriovBacking":{"_typeName":"VirtualSriovEthernetCardSriovBackingInfo",
				"physicalFunctionBacking":{"_typeName":"VirtualPCIPassthroughDeviceBackingInfo","id":"0000:3b:00.0","deviceId":"1572","systemId":"sys","vendorId":-32634,"deviceName":"pf0"}}}}]}`))
	if err != nil || len(adapters) != 1 {
		t.Fatalf("classAdapters = %v, %v; want one SR-IOV adapter", adapters, err)
	}
	backing := &types.VirtualEthernetCardNetworkBackingInfo{Network: &types.ManagedObjectReference{Type: "Network", Value: "network-1"}}
	d := newAdapter(wantNIC{iface: "eth0", adapter: adapterType(adapters[0]), proto: adapters[0], backing: backing, mac: "00:50:56:00:00:09"}, -1)
	card, ok := d.(*types.VirtualSriovEthernetCard)
	if !ok {
		t.Fatalf("adapter %T, want a VirtualSriovEthernetCard", d)
	}
	if card.SriovBacking == nil || card.SriovBacking.PhysicalFunctionBacking == nil || card.SriovBacking.PhysicalFunctionBacking.Id != "0000:3b:00.0" || card.AllowGuestOSMtuChange == nil || !*card.AllowGuestOSMtuChange {
		t.Errorf("SR-IOV settings lost: %+v", card)
	}
	if card.Key != -1 || card.MacAddress != "00:50:56:00:00:09" || card.Backing != backing {
		t.Errorf("key %d, MAC %q, backing %v; want the VM's", card.Key, card.MacAddress, card.Backing)
	}
	if class := adapters[0].(*types.VirtualSriovEthernetCard); class.Key != -100 || class.MacAddress != "" {
		t.Errorf("the class's adapter changed: key %d, MAC %q", class.Key, class.MacAddress)
	}
}
