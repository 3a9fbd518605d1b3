package network

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// An interface's macAddr (a VPC network's, NET-13) is its adapter's MAC: the image's
// adapter, with another, is replaced by one with it while the VM is off. A second VM
// asking for the same MAC is refused it: NetworkReady says whose it is.
func TestMACAddrIsTheAdaptersMAC(t *testing.T) {
	js := startService(t)
	const mac = "00:50:56:3a:bb:cc"
	vpcVM := func(name string) *deploytest.VM {
		return deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
			ClassName: inventory.SeedClassName,
			Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{{
				Name:    "eth0",
				Network: &model.PartialObjectRef{APIVersion: "crd.nsx.vmware.com/v1alpha1", Kind: "SubnetSet", Name: "VM Network"},
				MACAddr: strings.ToUpper(mac),
			}}},
		})
	}
	v := vpcVM("fixed-mac")
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "True"
	})
	cards := adapters(readTestVM(t, vm).Config.Hardware.Device)
	if len(cards) != 1 || cardMAC(cards[0]) != mac {
		t.Fatalf("adapters %d, MAC %q; want one with macAddr's %s", len(cards), cardMAC(cards[0]), mac)
	}

	other := vpcVM("same-mac")
	other.Put(t, js, false)
	otherVM := other.Deploy(t, vc, js, inventory.PhotonImage)
	other.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady False: the MAC is another VM's", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c := findCondition(st, model.ConditionNetworkReady)
		return c.Status == "False" && strings.Contains(c.Message, "MAC address "+mac+" is another VM's")
	})
	for _, c := range adapters(readTestVM(t, otherVM).Config.Hardware.Device) {
		if cardMAC(c) == mac {
			t.Errorf("the second VM's adapter was given %s too", mac)
		}
	}
}

func cardMAC(d types.BaseVirtualDevice) string {
	return d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress
}
