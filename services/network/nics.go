package network

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// defaultAdapter is the type of the interfaces beyond those the class ConfigSpec defines
// (api-rules §9.1).
const defaultAdapter = "VirtualVmxnet3"

// wantNIC is the adapter one interface of spec.network needs.
type wantNIC struct {
	iface   string                  // spec.network.interfaces[].name
	adapter string                  // vSphere type, e.g. VirtualE1000
	proto   types.BaseVirtualDevice // the class's adapter of that type; nil: a plain one of it
	network string                  // vSphere network name
	backing types.BaseVirtualDeviceBackingInfo
	mac     string // of the adapter when it is added (mac.go)
	// fixedMAC is the interface's macAddr (lower case): its adapter has that MAC.
	fixedMAC string
}

// classAdapters are the network adapters a class ConfigSpec (raw vSphere JSON with
// _typeName discriminators) adds, in order, as the class gives them: their type and
// settings, such as an SR-IOV card's physical function.
func classAdapters(configSpec json.RawMessage) ([]types.BaseVirtualDevice, error) {
	cs, err := model.DecodeConfigSpec(configSpec)
	if err != nil {
		return nil, fmt.Errorf("decode the class configSpec: %w", err)
	}
	var out []types.BaseVirtualDevice
	for _, ch := range cs.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		if spec.Operation != "" && spec.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			continue
		}
		if _, ok := spec.Device.(types.BaseVirtualEthernetCard); ok {
			out = append(out, spec.Device)
		}
	}
	return out, nil
}

// adapterType is the vSphere type name of a device, e.g. VirtualVmxnet3.
func adapterType(d types.BaseVirtualDevice) string { return reflect.TypeOf(d).Elem().Name() }

// adapterPrototype is an adapter of the named type, or nil when it names none.
func adapterPrototype(typeName string) types.BaseVirtualDevice {
	for _, d := range object.EthernetCardTypes() {
		if adapterType(d) == typeName {
			return d
		}
	}
	return nil
}

// newAdapter is a new adapter of the type, on the backing, connected at power-on, with
// the MAC address the service claimed for it.
func newAdapter(w wantNIC, key int32) types.BaseVirtualDevice {
	proto := w.proto
	if proto == nil {
		proto = cmp.Or(adapterPrototype(w.adapter), adapterPrototype(defaultAdapter))
	}
	// A copy of the class's adapter: what the class sets of it stays (e.g. an SR-IOV
	// card's physical function); key, network, MAC and connection are the VM's.
	copied := reflect.New(reflect.TypeOf(proto).Elem())
	copied.Elem().Set(reflect.ValueOf(proto).Elem())
	d := copied.Interface().(types.BaseVirtualDevice)
	card := d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	card.Key = key
	card.Backing = w.backing
	card.AddressType, card.MacAddress = string(types.VirtualEthernetCardMacTypeManual), w.mac
	card.Connectable = &types.VirtualDeviceConnectInfo{StartConnected: true, AllowGuestControl: true, Connected: true}
	return d
}

// adapters are the VM's network adapters in device key order, the order in which they
// stand for spec.network.interfaces.
func adapters(devices []types.BaseVirtualDevice) []types.BaseVirtualDevice {
	out := object.VirtualDeviceList(devices).SelectByType((*types.VirtualEthernetCard)(nil))
	slices.SortFunc(out, func(a, b types.BaseVirtualDevice) int {
		return cmp.Compare(a.GetVirtualDevice().Key, b.GetVirtualDevice().Key)
	})
	return out
}

// keptAdapters says how many of the adapters stay to stand for the first interfaces:
// all that both have, up to the first adapter of the wrong type or without the
// interface's macAddr, which is removed with those after it and added again in order (so
// device key order keeps standing for interface order), but only while the VM is powered
// off, otherwise problem says so.
func keptAdapters(have []types.BaseVirtualDevice, want []wantNIC, poweredOff bool) (keep int, problem string) {
	n := min(len(have), len(want))
	for i := range n {
		why := ""
		got := adapterType(have[i])
		mac := strings.ToLower(have[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress)
		switch {
		case got != want[i].adapter:
			why = fmt.Sprintf("the adapter of %s is a %s, the class asks for a %s", want[i].iface, got, want[i].adapter)
		case want[i].fixedMAC != "" && mac != want[i].fixedMAC:
			why = fmt.Sprintf("the adapter of %s has MAC address %s, its macAddr is %s", want[i].iface, mac, want[i].fixedMAC)
		default:
			continue
		}
		if poweredOff {
			return i, ""
		}
		return n, why + ": it is replaced while the VM is powered off"
	}
	return n, ""
}

// nicChanges are the device changes that make the adapters match want, keeping
// have[:keep] (keptAdapters): a kept adapter on the wrong network is changed in place,
// the adapters after them are removed and want[keep:] added. after are the adapters
// once the changes are made, in interface order.
func nicChanges(have []types.BaseVirtualDevice, want []wantNIC, keep int) (changes []types.BaseVirtualDeviceConfigSpec, after []types.BaseVirtualDevice) {
	for i := range keep {
		card := have[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		if !sameNetwork(card.Backing, want[i].backing) {
			card.Backing = want[i].backing
			changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: have[i]})
		}
		after = append(after, have[i])
	}
	for i := keep; i < len(have); i++ {
		changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: have[i]})
	}
	for i := keep; i < len(want); i++ {
		d := newAdapter(want[i], int32(-1-i))
		changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: d})
		after = append(after, d)
	}
	return changes, after
}

// sameNetwork tells whether an adapter's backing is the wanted network.
func sameNetwork(have, want types.BaseVirtualDeviceBackingInfo) bool {
	switch w := want.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		h, ok := have.(*types.VirtualEthernetCardNetworkBackingInfo)
		if !ok {
			return false
		}
		if h.Network != nil && w.Network != nil {
			return h.Network.Value == w.Network.Value
		}
		return h.DeviceName == w.DeviceName
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		h, ok := have.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo)
		return ok && h.Port.PortgroupKey == w.Port.PortgroupKey && h.Port.SwitchUuid == w.Port.SwitchUuid
	case *types.VirtualEthernetCardOpaqueNetworkBackingInfo:
		h, ok := have.(*types.VirtualEthernetCardOpaqueNetworkBackingInfo)
		return ok && h.OpaqueNetworkId == w.OpaqueNetworkId && h.OpaqueNetworkType == w.OpaqueNetworkType
	}
	return false
}

// goneMACs are the claim keys (mac.go) of the MACs of the adapters changes remove and
// none of after has: those of interfaces removed, not of an adapter replaced with its MAC.
func goneMACs(changes []types.BaseVirtualDeviceConfigSpec, after []types.BaseVirtualDevice) map[string]bool {
	kept := map[string]bool{}
	for _, d := range after {
		kept[macKey(strings.ToLower(d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress))] = true
	}
	gone := map[string]bool{}
	for _, c := range changes {
		spec := c.GetVirtualDeviceConfigSpec()
		card, ok := spec.Device.(types.BaseVirtualEthernetCard)
		if !ok || spec.Operation != types.VirtualDeviceConfigSpecOperationRemove {
			continue
		}
		if key := macKey(strings.ToLower(card.GetVirtualEthernetCard().MacAddress)); !kept[key] {
			gone[key] = true
		}
	}
	return gone
}
