package network

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// twoAdapterClass is the seed document's class whose ConfigSpec defines an E1000 and a
// Vmxnet2 adapter.
const twoAdapterClass = "two-adapter-class"

func putTwoAdapterClass(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	class := map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachineClass",
		"metadata": map[string]any{"name": twoAdapterClass, "namespace": "my-namespace"},
		"spec": map[string]any{
			"configSpec": map[string]any{
				"_typeName": "VirtualMachineConfigSpec",
				"deviceChange": []any{
					map[string]any{"_typeName": "VirtualDeviceConfigSpec", "operation": "add", "device": map[string]any{"_typeName": "VirtualE1000", "key": -100}},
					map[string]any{"_typeName": "VirtualDeviceConfigSpec", "operation": "add", "device": map[string]any{"_typeName": "VirtualVmxnet2", "key": -200}},
				},
			},
			"hardware": map[string]any{"cpus": 2, "memory": "4Gi"},
		},
	}
	ref := events.Ref{Plural: "virtualmachineclasses", Namespace: "my-namespace", Name: twoAdapterClass}
	if err := deploytest.PutObject(t.Context(), js, ref, class); err != nil {
		t.Fatal(err)
	}
}

// threeNICVM stores a VM of the two-adapter class with three interfaces: eth0 and eth2
// on VM Network, eth1 on workload-network.
func threeNICVM(t *testing.T, js jetstream.JetStream, name string) *deploytest.VM {
	t.Helper()
	putTwoAdapterClass(t, js)
	v := deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
		ClassName: twoAdapterClass, StorageClass: "my-storage-class",
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{
			iface("eth0", "VM Network"), iface("eth1", "workload-network"), iface("eth2", "VM Network"),
		}},
	})
	v.Put(t, js, false)
	return v
}

func iface(name, network string) model.VirtualMachineNetworkInterfaceSpec {
	return model.VirtualMachineNetworkInterfaceSpec{Name: name, Network: &model.PartialObjectRef{Name: network}}
}

// The image's one Vmxnet3 adapter becomes the class's E1000 and Vmxnet2 plus a Vmxnet3
// for the third interface, each on its network; every interface gets an address of its
// network's pool; a second reconcile changes nothing and keeps the addresses.
func TestAdaptersMatchInterfaces(t *testing.T) {
	js := startService(t)
	v := threeNICVM(t, js, "three-nics")
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady waiting for the VM", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "False" && r == model.ReasonNotReady
	})
	if st.Network != nil {
		t.Errorf("status.network before the VM exists: %+v", st.Network)
	}

	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st = v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "True"
	})
	if s, _ := deploytest.Condition(st, model.ConditionBootstrapReady); s != "True" {
		t.Errorf("BootstrapReady = %q without a bootstrap, want True", s)
	}

	cards := adapters(readTestVM(t, vm).Config.Hardware.Device)
	var gotTypes, gotNets []string
	for _, c := range cards {
		gotTypes = append(gotTypes, adapterType(c))
		gotNets = append(gotNets, backingNetwork(t, c))
	}
	if want := []string{"VirtualE1000", "VirtualVmxnet2", "VirtualVmxnet3"}; !cmp.Equal(gotTypes, want) {
		t.Errorf("adapter types %v, want %v", gotTypes, want)
	}
	if want := []string{"VM Network", "workload-network", "VM Network"}; !cmp.Equal(gotNets, want) {
		t.Errorf("adapter networks %v, want %v", gotNets, want)
	}

	n := st.Network
	if n == nil || n.Config == nil || len(n.Config.Interfaces) != 3 {
		t.Fatalf("status.network = %+v, want a config of three interfaces", n)
	}
	pools := DefaultPools()
	wantNet := []string{"VM Network", "workload-network", "VM Network"}
	for i, c := range n.Config.Interfaces {
		if c.IP == nil || len(c.IP.Addresses) != 1 {
			t.Fatalf("interface %s: ip %+v, want one address", c.Name, c.IP)
		}
		addr := netip.MustParsePrefix(c.IP.Addresses[0])
		pool := pools[wantNet[i]]
		if !pool.Contains(addr.Addr()) || addr.Bits() != pool.Bits() || addr.Addr() == pool.Addr().Next() {
			t.Errorf("interface %s: address %s, want a host address of %s other than the gateway", c.Name, addr, pool)
		}
		if want := pool.Addr().Next().String(); c.IP.Gateway4 != want {
			t.Errorf("interface %s: gateway4 %s, want %s", c.Name, c.IP.Gateway4, want)
		}
	}
	if a, b := n.Config.Interfaces[0].IP.Addresses[0], n.Config.Interfaces[2].IP.Addresses[0]; a == b {
		t.Errorf("eth0 and eth2 share address %s", a)
	}
	wantDNS := &model.VirtualMachineNetworkConfigDNSStatus{HostName: "three-nics", Nameservers: DefaultNameservers}
	if diff := cmp.Diff(wantDNS, n.Config.DNS); diff != "" {
		t.Errorf("config.dns (-want +got):\n%s", diff)
	}
	if n.PrimaryIP4 != "" || n.PrimaryIP6 != "" {
		t.Errorf("primary addresses %q, %q although the guest reports none", n.PrimaryIP4, n.PrimaryIP6)
	}
	var wantIfaces []model.VirtualMachineNetworkInterfaceStatus
	for i, c := range cards {
		card := c.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		wantIfaces = append(wantIfaces, model.VirtualMachineNetworkInterfaceStatus{
			Name: []string{"eth0", "eth1", "eth2"}[i], DeviceKey: card.Key,
			IP: &model.VirtualMachineNetworkInterfaceIPStatus{MACAddr: card.MacAddress},
		})
	}
	if diff := cmp.Diff(wantIfaces, n.Interfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}

	// Redelivered and reconciled again: the same adapters, the same addresses, no
	// reconfigure at all.
	version := changeVersion(t, vm)
	v.Put(t, js, false)
	_, st2 := v.WaitStatus(t, js, model.ServiceNetwork, "generation 2", func(s events.Slice, st model.VirtualMachineStatus) bool {
		c, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s.Generation == 2 && c == "True"
	})
	if diff := cmp.Diff(st.Network, st2.Network); diff != "" {
		t.Errorf("status.network changed on a second reconcile (-first +second):\n%s", diff)
	}
	again := adapters(readTestVM(t, vm).Config.Hardware.Device)
	if len(again) != len(cards) {
		t.Fatalf("%d adapters after a second reconcile, want %d", len(again), len(cards))
	}
	for i := range cards {
		if again[i].GetVirtualDevice().Key != cards[i].GetVirtualDevice().Key {
			t.Errorf("adapter %d replaced on a second reconcile", i)
		}
	}
	if v := changeVersion(t, vm); v != version {
		t.Errorf("the VM was reconfigured on a second reconcile: changeVersion %s, then %s", version, v)
	}
}

// The seed's cloud-init bootstrap reaches the guest through guestinfo: meta-data with the
// instance ID, host name and netplan configuration of the adapter (matched by MAC), and the
// rendered cloud-config, both gzip+base64.
func TestCloudInitDelivered(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "cloud-vm", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, StorageClass: "my-storage-class",
		BiosUUID: "2f5e7b41-9c1a-4c7e-8d4b-1a2b3c4d5e6f",
		Network:  &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}},
		Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			InstanceID: "2f5e7b41-9c1a-4c7e-8d4b-1a2b3c4d5e6f",
			CloudConfig: &model.CloudConfig{
				Users:      []model.CloudConfigUser{{Name: "jdoe", PrimaryGroup: ptr("jdoe"), Groups: []string{"users"}, SSHAuthorizedKeys: []string{"ssh-rsa AAAA jdoe"}}},
				RunCmd:     []byte(`["ls /", ["ls", "-a", "-l", "/"]]`),
				WriteFiles: []model.CloudConfigWriteFile{{Path: "/etc/my-plaintext", Permissions: "0644", Owner: "root:root", Content: []byte(`"Hello, world.\n"`)}},
			},
		}},
	})
	v.Put(t, js, false)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady waiting", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r := deploytest.Condition(st, model.ConditionBootstrapReady)
		return s == "False" && r == model.ReasonNotReady
	})
	reconfigures := recordReconfigures(t)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st = v.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionBootstrapReady)
		return s == "True"
	})
	// The image's adapter is on the interface's network already: one reconfigure writes
	// the cloud-init data.
	if got := reconfigures.of(vm.Reference()); len(got) != 1 || !got[0].guestinfo {
		t.Errorf("reconfigures of the adapters and guestinfo: %+v, want one, of the guestinfo", got)
	}

	extra := extraConfig(t, vm)
	for _, k := range []string{keyMetadataEncoding, keyUserdataEncoding} {
		if extra[k] != encodingGzipBase64 {
			t.Errorf("%s = %q, want %s", k, extra[k], encodingGzipBase64)
		}
	}
	var meta struct {
		InstanceID string `json:"instance-id"`
		Hostname   string `json:"local-hostname"`
		Network    struct {
			Version   int `json:"version"`
			Ethernets map[string]struct {
				Match     map[string]string `json:"match"`
				Addresses []string          `json:"addresses"`
				Gateway4  string            `json:"gateway4"`
				DHCP4     bool              `json:"dhcp4"`
			} `json:"ethernets"`
		} `json:"network"`
	}
	if err := yaml.Unmarshal([]byte(gunzip(t, extra[keyMetadata])), &meta); err != nil {
		t.Fatalf("meta-data: %v", err)
	}
	card := adapters(readTestVM(t, vm).Config.Hardware.Device)[0].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	eth0 := meta.Network.Ethernets["eth0"]
	cfg := st.Network.Config.Interfaces[0].IP
	if meta.InstanceID != "2f5e7b41-9c1a-4c7e-8d4b-1a2b3c4d5e6f" || meta.Hostname != "cloud-vm" || meta.Network.Version != 2 {
		t.Errorf("meta-data instance-id %q hostname %q network version %d", meta.InstanceID, meta.Hostname, meta.Network.Version)
	}
	if eth0.Match["macaddress"] != card.MacAddress || !cmp.Equal(eth0.Addresses, cfg.Addresses) || eth0.Gateway4 != cfg.Gateway4 || eth0.DHCP4 {
		t.Errorf("meta-data eth0 = %+v, want MAC %s, addresses %v, gateway %s, no DHCP", eth0, card.MacAddress, cfg.Addresses, cfg.Gateway4)
	}
	user := gunzip(t, extra[keyUserdata])
	defer func() {
		// Reconciled again, the data is already there: nothing is written.
		version := changeVersion(t, vm)
		v.Put(t, js, false)
		v.WaitStatus(t, js, model.ServiceNetwork, "generation 2", func(s events.Slice, st model.VirtualMachineStatus) bool {
			c, _ := deploytest.Condition(st, model.ConditionBootstrapReady)
			return s.Generation == 2 && c == "True"
		})
		if now := changeVersion(t, vm); now != version {
			t.Errorf("the bootstrap was written again: changeVersion %s, then %s", version, now)
		}
	}()
	for _, want := range []string{"#cloud-config\n", "name: jdoe", "primary_group: jdoe", "- ls /", "path: /etc/my-plaintext", "Hello, world."} {
		if !strings.Contains(user, want) {
			t.Errorf("user-data lacks %q:\n%s", want, user)
		}
	}
}

// Adapters the service adds get MACs it claimed, so the cloud-init data naming them goes
// to vCenter in the reconfigure that adds them: one reconfigure in all.
func TestAddedAdaptersCarryTheirCloudInit(t *testing.T) {
	js := startService(t)
	putTwoAdapterClass(t, js)
	v := deploytest.NewVM("my-namespace", "two-nics-cloud", model.VirtualMachineSpec{
		ClassName: twoAdapterClass, StorageClass: "my-storage-class",
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{
			iface("eth0", "VM Network"), iface("eth1", "workload-network"),
		}},
		Bootstrap: &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			InstanceID: "6d0e1c2b-3a49-4f58-9e67-7c8d9e0f1a2b", CloudConfig: &model.CloudConfig{},
		}},
	})
	v.Put(t, js, false)
	reconfigures := recordReconfigures(t)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady and BootstrapReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		n, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		b, _ := deploytest.Condition(st, model.ConditionBootstrapReady)
		return n == "True" && b == "True"
	})
	if got := reconfigures.of(vm.Reference()); len(got) != 1 || !got[0].adapters || !got[0].guestinfo {
		t.Errorf("reconfigures of the adapters and guestinfo: %+v, want one with both", got)
	}

	var meta struct {
		Network struct {
			Ethernets map[string]struct {
				Match map[string]string `json:"match"`
			} `json:"ethernets"`
		} `json:"network"`
	}
	if err := yaml.Unmarshal([]byte(gunzip(t, extraConfig(t, vm)[keyMetadata])), &meta); err != nil {
		t.Fatalf("meta-data: %v", err)
	}
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	cards := adapters(readTestVM(t, vm).Config.Hardware.Device)
	if len(cards) != 2 {
		t.Fatalf("%d adapters, want 2", len(cards))
	}
	for i, name := range []string{"eth0", "eth1"} {
		card := cards[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		if card.AddressType != string(types.VirtualEthernetCardMacTypeManual) || macIndex(card.MacAddress) == macRange {
			t.Errorf("%s: MAC %s (%s), want one of 00:50:56:00:00:00-3f:ff:ff set by hand", name, card.MacAddress, card.AddressType)
		}
		if got := meta.Network.Ethernets[name].Match["macaddress"]; got != card.MacAddress {
			t.Errorf("%s: meta-data matches MAC %q, the adapter has %s", name, got, card.MacAddress)
		}
		if e, err := kv.Get(t.Context(), macKey(card.MacAddress)); err != nil || string(e.Value()) != holder(v.UID, name) {
			t.Errorf("%s: claim of MAC %s: %v, want it held by %s", name, card.MacAddress, err, holder(v.UID, name))
		}
	}
}

// A bootstrap that cannot be delivered says why, before the VM even exists.
func TestBootstrapProblems(t *testing.T) {
	js := startService(t)
	tests := []struct {
		name   string
		boot   *model.VirtualMachineBootstrapSpec
		reason string
		names  string // what the message must name
	}{
		{"raw-secret", &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			RawCloudConfig: &model.SecretKeySelector{Name: "my-cloud-config", Key: "user-data"}}}, model.ReasonRequiredKeyNotFound, `secret "my-cloud-config"`},
		{"password-secret", &model.VirtualMachineBootstrapSpec{CloudInit: &model.VirtualMachineBootstrapCloudInitSpec{
			CloudConfig: &model.CloudConfig{Users: []model.CloudConfigUser{{Name: "jdoe", Passwd: &model.SecretKeySelector{Name: "pw", Key: "password"}}}}}}, model.ReasonRequiredKeyNotFound, `secret "pw"`},
		{"vapp-secret", &model.VirtualMachineBootstrapSpec{VAppConfig: &model.VirtualMachineBootstrapVAppConfigSpec{RawProperties: "props"}},
			model.ReasonRequiredKeyNotFound, `vAppConfig: secret "props" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := deploytest.NewVM("my-namespace", "boot-"+tt.name, model.VirtualMachineSpec{ClassName: inventory.SeedClassName, Bootstrap: tt.boot})
			v.Put(t, js, false)
			_, st := v.WaitStatus(t, js, model.ServiceNetwork, "reason "+tt.reason, func(_ events.Slice, st model.VirtualMachineStatus) bool {
				s, r := deploytest.Condition(st, model.ConditionBootstrapReady)
				return s == "False" && r == tt.reason
			})
			if c := findCondition(st, model.ConditionBootstrapReady); !strings.Contains(c.Message, tt.names) {
				t.Errorf("message %q does not name %s", c.Message, tt.names)
			}
		})
	}
}

// With networking disabled the image's adapter is removed and NetworkReady is absent; on
// delete the VM's addresses go back to the pool.
func TestDisabledNetworkingAndRelease(t *testing.T) {
	js := startService(t)
	off := deploytest.NewVM("my-namespace", "no-network", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, Network: &model.VirtualMachineNetworkSpec{Disabled: true},
	})
	off.Put(t, js, false)
	vm := off.Deploy(t, vc, js, inventory.PhotonImage)
	off.WaitStatus(t, js, model.ServiceNetwork, "BootstrapReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionBootstrapReady)
		n, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "True" && n == "" && st.Network != nil
	})
	if cards := adapters(readTestVM(t, vm).Config.Hardware.Device); len(cards) != 0 {
		t.Errorf("%d adapters with networking disabled, want 0", len(cards))
	}

	on, addr := addressedVM(t, js, "with-network")
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(t.Context(), addr); err != nil || string(e.Value()) != holder(on.UID, "eth0") {
		t.Fatalf("claim of %s: %v, want held by %s", addr, err, holder(on.UID, "eth0"))
	}
	// Deleted, but placement has not let the VM go yet (it may still run): the address
	// stays, and network publishes nothing.
	on.Put(t, js, true)
	deleted, err := events.LastSpec(t.Context(), js, on.Ref)
	if err != nil {
		t.Fatal(err)
	}
	deploytest.WaitProcessed(t, js, model.ServiceNetwork, deleted.Seq)
	if e, err := kv.Get(t.Context(), addr); err != nil || string(e.Value()) != holder(on.UID, "eth0") {
		t.Errorf("claim of %s while placement still has the VM: %v, want it kept", addr, err)
	}
	if s, err := events.LastStatus(t.Context(), js, on.Ref, model.ServiceNetwork); err != nil || s.Slice.Released || s.Slice.Generation == on.Generation() {
		t.Errorf("network's slice while placement still has the VM: %+v (%v), want the one before the deletion", s.Slice, err)
	}
	placementReleases(t, js, on)
	on.WaitStatus(t, js, model.ServiceNetwork, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	if _, err := kv.Get(t.Context(), addr); err == nil {
		t.Errorf("address %s still claimed after the VM was released", addr)
	}
}

// A VM deleted with skip-delete-platform stays in vCenter, running with its addresses:
// they stay claimed when network releases the object.
func TestVMLeftInVCenterKeepsItsAddresses(t *testing.T) {
	js := startService(t)
	left, addr := addressedVM(t, js, "left-running")
	left.Annotations = map[string]string{model.AnnotationSkipDeletePlatform: ""}
	left.Put(t, js, true)
	placementReleases(t, js, left)
	left.WaitStatus(t, js, model.ServiceNetwork, "released", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Released })
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(t.Context(), addr); err != nil || string(e.Value()) != holder(left.UID, "eth0") {
		t.Errorf("claim of %s after the object went, its VM left running: %v, want it kept", addr, err)
	}
}

// A static address on a pooled network that the pool already gave another VM is not
// configured twice: NetworkReady says it is held, and the VM is not customized with it.
func TestStaticAddressHeldByAnotherVM(t *testing.T) {
	js := startService(t)
	_, addr := addressedVM(t, js, "pooled")
	v := deploytest.NewVM("my-namespace", "static-dup", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{{
			Name: "eth0", Network: &model.PartialObjectRef{Name: "VM Network"}, Addresses: []string{addr + "/24"}, Gateway4: "192.168.0.1",
		}}},
	})
	v.Put(t, js, false)
	v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady False: "+addr+" held", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		c := findCondition(st, model.ConditionNetworkReady)
		return c.Status == "False" && strings.Contains(c.Message, "static address "+addr+" is held by another interface")
	})
	if st.Network != nil && st.Network.Config != nil {
		t.Errorf("network config %+v reported for an address another VM holds", st.Network.Config)
	}
}

// A static address the VM no longer has is free again once its guest does not use it:
// moved to another address, it can then be given to another VM, which is refused it while
// the first VM's guest still runs with it; an interface renamed keeps its address.
func TestStaticAddressMovesBetweenVMs(t *testing.T) {
	js := startService(t)
	static := func(name, addr string) []model.VirtualMachineNetworkInterfaceSpec {
		return []model.VirtualMachineNetworkInterfaceSpec{{
			Name: name, Network: &model.PartialObjectRef{Name: "VM Network"}, Addresses: []string{addr}, Gateway4: "192.168.0.1",
		}}
	}
	networkReady := func(v *deploytest.VM, what string, ok func(c metav1.Condition, cfg *model.VirtualMachineNetworkConfigStatus) bool) {
		t.Helper()
		v.WaitStatus(t, js, model.ServiceNetwork, what, func(s events.Slice, st model.VirtualMachineStatus) bool {
			var cfg *model.VirtualMachineNetworkConfigStatus
			if st.Network != nil {
				cfg = st.Network.Config
			}
			return s.Generation == v.Generation() && ok(findCondition(st, model.ConditionNetworkReady), cfg)
		})
	}
	configured := func(v *deploytest.VM, iface, addr string) {
		t.Helper()
		networkReady(v, iface+" at "+addr, func(c metav1.Condition, cfg *model.VirtualMachineNetworkConfigStatus) bool {
			return c.Status == "True" && cfg != nil && len(cfg.Interfaces) == 1 && cfg.Interfaces[0].Name == iface &&
				cfg.Interfaces[0].IP.Addresses[0] == addr
		})
	}
	a := deploytest.NewVM("my-namespace", "moves-away", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, Network: &model.VirtualMachineNetworkSpec{Interfaces: static("eth0", "192.168.0.70/24")},
	})
	a.Put(t, js, false)
	aVM := a.Deploy(t, vc, js, inventory.PhotonImage)
	configured(a, "eth0", "192.168.0.70/24")
	powerOn(t, aVM) // its guest customized with .70
	setGuest(t, aVM, map[string]any{"guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})

	a.Spec.Network.Interfaces = static("eth0", "192.168.0.71/24")
	a.Put(t, js, false)
	configured(a, "eth0", "192.168.0.71/24")
	b := deploytest.NewVM("my-namespace", "moves-in", model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName, Network: &model.VirtualMachineNetworkSpec{Interfaces: static("eth0", "192.168.0.70/24")},
	})
	b.Put(t, js, false)
	b.Deploy(t, vc, js, inventory.PhotonImage)
	networkReady(b, "refused while the other guest uses it", func(c metav1.Condition, _ *model.VirtualMachineNetworkConfigStatus) bool {
		return c.Status == "False" && strings.Contains(c.Message, "192.168.0.70 is held by another interface")
	})

	// Powered off (to boot with its new address), its guest uses .70 no more.
	if task, err := aVM.PowerOff(t.Context()); err != nil || task.Wait(t.Context()) != nil {
		t.Fatalf("power off: %v", err)
	}
	a.Annotations = map[string]string{"test.vmop.dev/look-again": "1"} // a change: looked at again
	a.Put(t, js, false)
	waitReleased(t, js, "192.168.0.70")
	b.Annotations = map[string]string{"test.vmop.dev/look-again": "1"}
	b.Put(t, js, false)
	configured(b, "eth0", "192.168.0.70/24")

	a.Spec.Network.Interfaces = static("eth1", "192.168.0.71/24")
	a.Put(t, js, false)
	configured(a, "eth1", "192.168.0.71/24")
}

// waitReleased waits until the IPAM bucket's claim of key is deleted.
func waitReleased(t *testing.T, js jetstream.JetStream, key string) {
	t.Helper()
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop() //nolint:errcheck // the test's end stops it too
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-w.Updates():
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				return
			}
		case <-deadline:
			t.Fatalf("claim %s not released before the deadline", key)
		}
	}
}

// addressedVM deploys a VM with one interface on the pooled VM Network and returns it once
// network reports it ready, with the address it was given.
func addressedVM(t *testing.T, js jetstream.JetStream, name string) (*deploytest.VM, string) {
	t.Helper()
	v := deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
		ClassName: inventory.SeedClassName,
		Network:   &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}},
	})
	v.Put(t, js, false)
	v.Deploy(t, vc, js, inventory.PhotonImage)
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "True"
	})
	return v, strings.Split(st.Network.Config.Interfaces[0].IP.Addresses[0], "/")[0]
}

// placementReleases publishes placement's release of the deleted VM, as placement does once
// it destroyed the VM (or left it in vCenter).
func placementReleases(t *testing.T, js jetstream.JetStream, v *deploytest.VM) {
	t.Helper()
	if _, err := events.PublishStatus(t.Context(), js, v.Ref, events.Slice{
		Service: model.ServicePlacement, UID: v.UID, Generation: v.Generation(), Released: true,
	}); err != nil {
		t.Fatal(err)
	}
}

func readTestVM(t *testing.T, vm *object.VirtualMachine) mo.VirtualMachine {
	t.Helper()
	var out mo.VirtualMachine
	if err := vm.Properties(context.Background(), vm.Reference(), []string{"config.hardware.device", "config.extraConfig"}, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func changeVersion(t *testing.T, vm *object.VirtualMachine) string {
	t.Helper()
	var out mo.VirtualMachine
	if err := vm.Properties(context.Background(), vm.Reference(), []string{"config.changeVersion"}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Config.ChangeVersion
}

func extraConfig(t *testing.T, vm *object.VirtualMachine) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range readTestVM(t, vm).Config.ExtraConfig {
		v := o.GetOptionValue()
		out[v.Key], _ = v.Value.(string)
	}
	return out
}

// backingNetwork names the network an adapter is on.
func backingNetwork(t *testing.T, d types.BaseVirtualDevice) string {
	t.Helper()
	switch b := d.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().Backing.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		return b.DeviceName
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		pg := object.NewDistributedVirtualPortgroup(vc.Client.Client, types.ManagedObjectReference{Type: "DistributedVirtualPortgroup", Value: b.Port.PortgroupKey})
		name, err := pg.ObjectName(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	return ""
}

func gunzip(t *testing.T, s string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(out)
}

func ptr[T any](v T) *T { return &v }

// reconfigured is what one ReconfigVM_Task asked of the network: adapters, guestinfo.
type reconfigured struct{ adapters, guestinfo bool }

// reconfigures records, per VM, the reconfigures that touch its network adapters or
// guestinfo, until the test ends.
type reconfigures struct {
	mu   sync.Mutex
	byVM map[types.ManagedObjectReference][]reconfigured
}

func recordReconfigures(t *testing.T) *reconfigures {
	r := &reconfigures{byVM: map[types.ManagedObjectReference][]reconfigured{}}
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		req, ok := m.Body.(*types.ReconfigVM_Task)
		if !ok {
			return nil, nil
		}
		var rc reconfigured
		for _, c := range req.Spec.DeviceChange {
			_, card := c.GetVirtualDeviceConfigSpec().Device.(types.BaseVirtualEthernetCard)
			rc.adapters = rc.adapters || card
		}
		for _, o := range req.Spec.ExtraConfig {
			rc.guestinfo = rc.guestinfo || strings.HasPrefix(o.GetOptionValue().Key, "guestinfo.")
		}
		if rc.adapters || rc.guestinfo {
			r.mu.Lock()
			r.byVM[m.This] = append(r.byVM[m.This], rc)
			r.mu.Unlock()
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })
	return r
}

func (r *reconfigures) of(vm types.ManagedObjectReference) []reconfigured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.byVM[vm])
}

// An interface removed from the spec gives its adapter's MAC back to the range once the
// adapter is gone from the VM; the other adapters keep theirs.
func TestRemovedInterfaceGivesItsMACBack(t *testing.T) {
	js := startService(t)
	v := threeNICVM(t, js, "nic-removed")
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	v.WaitStatus(t, js, model.ServiceNetwork, "NetworkReady True", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, _ := deploytest.Condition(st, model.ConditionNetworkReady)
		return s == "True"
	})
	var macs []string
	for _, c := range adapters(readTestVM(t, vm).Config.Hardware.Device) {
		macs = append(macs, c.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress)
	}
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	claimOf := func(mac string) string {
		e, err := kv.Get(t.Context(), macKey(mac))
		if err != nil {
			return err.Error()
		}
		return string(e.Value())
	}
	for i, mac := range macs {
		if got, want := claimOf(mac), holder(v.UID, []string{"eth0", "eth1", "eth2"}[i]); got != want {
			t.Fatalf("claim of %s: %q, want %q", mac, got, want)
		}
	}

	v.Spec.Network.Interfaces = v.Spec.Network.Interfaces[:2]
	v.Put(t, js, false)
	v.WaitStatus(t, js, model.ServiceNetwork, "two interfaces", func(s events.Slice, st model.VirtualMachineStatus) bool {
		return s.Generation == v.Generation() && st.Network != nil && len(st.Network.Interfaces) == 2
	})
	if n := len(adapters(readTestVM(t, vm).Config.Hardware.Device)); n != 2 {
		t.Fatalf("%d adapters after eth2 was removed, want 2", n)
	}
	if got := claimOf(macs[2]); got != jetstream.ErrKeyNotFound.Error() {
		t.Errorf("removed eth2's MAC %s still claimed: %q", macs[2], got)
	}
	held, err := kv.Get(t.Context(), heldKey(v.UID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(held.Value()), macKey(macs[2])) {
		t.Errorf("the VM's record still lists eth2's MAC: %q", held.Value())
	}
	for i, mac := range macs[:2] {
		if got, want := claimOf(mac), holder(v.UID, []string{"eth0", "eth1"}[i]); got != want {
			t.Errorf("claim of kept %s: %q, want %q", mac, got, want)
		}
	}
}
