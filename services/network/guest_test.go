package network

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// setGuest makes vcsim's guest report the given properties (the simulator's SET.<property
// path> ExtraConfig keys), as VMware Tools in a real guest would.
func setGuest(t *testing.T, vm *object.VirtualMachine, props map[string]any) {
	t.Helper()
	var spec types.VirtualMachineConfigSpec
	for k, v := range props {
		spec.ExtraConfig = append(spec.ExtraConfig, &types.OptionValue{Key: "SET." + k, Value: v})
	}
	reconfigureTest(t, vm, spec)
}

func reconfigureTest(t *testing.T, vm *object.VirtualMachine, spec types.VirtualMachineConfigSpec) {
	t.Helper()
	task, err := vm.Reconfigure(t.Context(), spec)
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
}

func powerOn(t *testing.T, vm *object.VirtualMachine) {
	t.Helper()
	task, err := vm.PowerOn(t.Context())
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if task, err := vm.PowerOff(context.Background()); err == nil {
			_ = task.Wait(context.Background())
		}
	})
}

func condition(st model.VirtualMachineStatus, typ string) (status, reason, message string) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return string(c.Status), c.Reason, c.Message
		}
	}
	return "", "", ""
}

// waitCondition waits for the network slice whose condition typ has the status and
// reason, and a message containing each of msg, and returns it.
func waitCondition(t *testing.T, js jetstream.JetStream, v *deploytest.VM, typ, status, reason string, msg ...string) model.VirtualMachineStatus {
	t.Helper()
	what := strings.Join(append([]string{typ, status, reason}, msg...), " ")
	_, st := v.WaitStatus(t, js, model.ServiceNetwork, what, func(_ events.Slice, st model.VirtualMachineStatus) bool {
		s, r, m := condition(st, typ)
		for _, part := range msg {
			if !strings.Contains(m, part) {
				return false
			}
		}
		return s == status && r == reason
	})
	return st
}

// A VM whose guest reports nothing (it is off) has no address, VMware Tools not running,
// the intended address not synced. Once the guest of the powered-on VM reports its
// addresses, DNS, routes, host name and VMware Tools (set in vcsim), status.network shows
// them and the conditions follow, without any other change to the VM. (Checked before the
// power-on: vcsim applies network's customization during the power-on task, so its guest
// may report the intended address before any slice says it did not.)
func TestGuestReportedNetwork(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "guest-net", model.VirtualMachineSpec{
		ClassName: "my-vm-class", StorageClass: "my-storage-class",
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}},
	})
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	waitCondition(t, js, v, model.ConditionNetworkReady, "True", "True")
	st := waitCondition(t, js, v, model.ConditionGuestNetworkConfigSynced, "False", model.ReasonNotSynced)
	if n := st.Network; n == nil || n.PrimaryIP4 != "" || n.HostName != "" || len(n.IPStacks) != 0 {
		t.Errorf("status.network %+v before the guest reports anything: want no primary address, host name or IP stack", n)
	}
	if s, r, _ := condition(st, model.ConditionTools); s != "False" || r != model.ReasonToolsNotRunning {
		t.Errorf("Tools %s %s in vcsim's default guest, want False %s", s, r, model.ReasonToolsNotRunning)
	}
	planned := netip.MustParsePrefix(st.Network.Config.Interfaces[0].IP.Addresses[0])
	powerOn(t, vm)
	card := adapters(readTestVM(t, vm).Config.Hardware.Device)[0].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()

	// guest.ipAddress first: vcsim copies it into guest.net, which one call must not set twice.
	setGuest(t, vm, map[string]any{
		"guest.ipAddress":          planned.Addr().String(),
		"guest.hostName":           "guest-net",
		"guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning),
		"guest.toolsVersion":       "12389",
	})
	setGuest(t, vm, map[string]any{
		"guest.net": types.ArrayOfGuestNicInfo{GuestNicInfo: []types.GuestNicInfo{{
			Network: "VM Network", MacAddress: card.MacAddress, Connected: true, DeviceConfigId: card.Key,
			IpAddress: []string{planned.Addr().String(), "fe80::1"},
			IpConfig: &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{
				{IpAddress: planned.Addr().String(), PrefixLength: int32(planned.Bits()), Origin: "manual", State: "preferred"},
				{IpAddress: "fe80::1", PrefixLength: 64, Origin: "linklayer", State: "preferred"},
			}},
			DnsConfig: &types.NetDnsConfigInfo{IpAddress: []string{"8.8.8.8"}, SearchDomain: []string{"example.com"}},
		}}},
		"guest.ipStack": types.ArrayOfGuestStackInfo{GuestStackInfo: []types.GuestStackInfo{{
			DnsConfig: &types.NetDnsConfigInfo{HostName: "guest-net", DomainName: "example.com", IpAddress: []string{"8.8.8.8", "8.8.4.4"}},
			IpRouteConfig: &types.NetIpRouteConfigInfo{IpRoute: []types.NetIpRouteConfigInfoIpRoute{
				{Network: "0.0.0.0", PrefixLength: 0, Gateway: types.NetIpRouteConfigInfoGateway{IpAddress: "192.168.0.1", Device: "0"}},
				{Network: "fe80::", PrefixLength: 64, Gateway: types.NetIpRouteConfigInfoGateway{Device: "0"}},
			}},
		}}},
	})
	_, st = v.WaitStatus(t, js, model.ServiceNetwork, "the guest's IP stack reported", func(_ events.Slice, st model.VirtualMachineStatus) bool {
		return st.Network != nil && len(st.Network.IPStacks) > 0
	})
	if s, r, _ := condition(st, model.ConditionGuestNetworkConfigSynced); s != "True" || r != model.ReasonSynced {
		t.Errorf("GuestNetworkConfigSynced %s %s with the intended address reported, want True %s", s, r, model.ReasonSynced)
	}
	n := st.Network
	if n.PrimaryIP4 != planned.Addr().String() || n.PrimaryIP6 != "" || n.HostName != "guest-net" {
		t.Errorf("primary %q %q, host name %q; want %s, none (link-local only), guest-net", n.PrimaryIP4, n.PrimaryIP6, n.HostName, planned.Addr())
	}
	if len(n.Interfaces) != 1 || n.Interfaces[0].Name != "eth0" || n.Interfaces[0].DeviceKey != card.Key || n.Interfaces[0].IP == nil {
		t.Fatalf("interfaces %+v, want eth0 on device %d", n.Interfaces, card.Key)
	}
	ip := n.Interfaces[0].IP
	if len(ip.Addresses) != 2 || ip.Addresses[0].Address != planned.String() || ip.Addresses[0].Origin != "manual" || ip.Addresses[0].State != "preferred" ||
		ip.Addresses[1].Address != "fe80::1/64" || ip.MACAddr != card.MacAddress {
		t.Errorf("eth0 ip %+v, want %s manual preferred and fe80::1/64 with MAC %s", ip, planned, card.MacAddress)
	}
	if d := n.Interfaces[0].DNS; d == nil || strings.Join(d.Nameservers, ",") != "8.8.8.8" || strings.Join(d.SearchDomains, ",") != "example.com" {
		t.Errorf("eth0 dns %+v", d)
	}
	if len(n.IPStacks) != 1 || len(n.IPStacks[0].IPRoutes) != 1 || n.IPStacks[0].IPRoutes[0].NetworkAddress != "0.0.0.0/0" ||
		n.IPStacks[0].IPRoutes[0].Gateway == nil || n.IPStacks[0].IPRoutes[0].Gateway.Address != "192.168.0.1" ||
		n.IPStacks[0].DNS == nil || n.IPStacks[0].DNS.DomainName != "example.com" {
		t.Errorf("ipStacks %+v, want the default route by 192.168.0.1 (the link-local one left out) and the DNS", n.IPStacks)
	}
	if s, r, m := condition(st, model.ConditionTools); s != "True" || r != model.ReasonToolsRunning || !strings.Contains(m, "12389") {
		t.Errorf("Tools %s %s %q, want True %s naming version 12389", s, r, m, model.ReasonToolsRunning)
	}
	if _, _, m := condition(st, model.ConditionGuestNetworkConfigSynced); !strings.Contains(m, planned.Addr().String()) {
		t.Errorf("GuestNetworkConfigSynced message %q does not name %s", m, planned.Addr())
	}

	// Another address than the intended one is reported, not synced.
	setGuest(t, vm, map[string]any{"guest.ipAddress": "127.0.0.7"})
	setGuest(t, vm, map[string]any{"guest.net": types.ArrayOfGuestNicInfo{GuestNicInfo: []types.GuestNicInfo{{
		MacAddress: card.MacAddress, Connected: true, DeviceConfigId: card.Key,
		IpConfig: &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{{IpAddress: "127.0.0.7", PrefixLength: 8}}},
	}}}})
	st = waitCondition(t, js, v, model.ConditionGuestNetworkConfigSynced, "False", model.ReasonNotSynced)
	if _, _, m := condition(st, model.ConditionGuestNetworkConfigSynced); !strings.Contains(m, "eth0: "+planned.Addr().String()) || st.Network.PrimaryIP4 != "127.0.0.7" {
		t.Errorf("NotSynced message %q (primary %q), want eth0 missing %s and primary 127.0.0.7", m, st.Network.PrimaryIP4, planned.Addr())
	}
}

// Readiness: each probe action decides Ready, re-run every period while the VM is on; a
// VM that is off is not ready.
func TestReadinessProbes(t *testing.T) {
	js := startService(t)
	deploy := func(name string, p model.VirtualMachineReadinessProbeSpec) (*deploytest.VM, *object.VirtualMachine) {
		p.PeriodSeconds, p.TimeoutSeconds = 1, 1
		v := deploytest.NewVM("my-namespace", name, model.VirtualMachineSpec{
			ClassName: "my-vm-class", StorageClass: "my-storage-class", ReadinessProbe: &p,
			Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}},
		})
		v.Put(t, js, false)
		return v, v.Deploy(t, vc, js, inventory.PhotonImage)
	}

	t.Run("guestHeartbeat", func(t *testing.T) {
		v, vm := deploy("heartbeat", model.VirtualMachineReadinessProbeSpec{GuestHeartbeat: &model.GuestHeartbeatAction{ThresholdStatus: "yellow"}})
		waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "not powered on")
		powerOn(t, vm)
		waitCondition(t, js, v, model.ConditionReady, "Unknown", model.ReasonUnknown) // vcsim reports no heartbeat
		setGuest(t, vm, map[string]any{"guestHeartbeatStatus": "red"})
		waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "red", "yellow")
		setGuest(t, vm, map[string]any{"guestHeartbeatStatus": "yellow"})
		waitCondition(t, js, v, model.ConditionReady, "True", model.ReasonReady)
	})

	t.Run("tcpSocket", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() { // accept and drop: the probe only opens the connection
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		port := l.Addr().(*net.TCPAddr).Port
		v, vm := deploy("tcp", model.VirtualMachineReadinessProbeSpec{TCPSocket: &model.TCPSocketAction{Port: intstr.FromInt(port)}})
		powerOn(t, vm)
		// The planned address is never dialled: the guest reports none.
		waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "no IP address")
		setGuest(t, vm, map[string]any{"guest.ipAddress": "127.0.0.1"})
		waitCondition(t, js, v, model.ConditionReady, "True", model.ReasonReady)
		l.Close()
		waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "127.0.0.1:"+strconv.Itoa(port), "refused")
	})

	t.Run("guestInfo", func(t *testing.T) {
		v, vm := deploy("guestinfo", model.VirtualMachineReadinessProbeSpec{GuestInfo: []model.GuestInfoAction{{Key: "ready", Value: "^true$"}, {Key: "role"}}})
		powerOn(t, vm)
		waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "guestinfo.ready is not set")
		reconfigureTest(t, vm, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: "guestinfo.ready", Value: "not yet"}, &types.OptionValue{Key: "guestinfo.role", Value: "db"},
		}})
		st := waitCondition(t, js, v, model.ConditionReady, "False", model.ReasonNotReady, "^true$")
		if _, _, m := condition(st, model.ConditionReady); strings.Contains(m, "not yet") {
			t.Errorf("Ready message %q quotes the guest's value", m)
		}
		reconfigureTest(t, vm, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "guestinfo.ready", Value: "true"}}})
		waitCondition(t, js, v, model.ConditionReady, "True", model.ReasonReady)
	})
}

// spec.network.disabled counts when the VM is deployed only: disabling networking later
// keeps the adapters, enabling it later adds none.
func TestNetworkDisabledOnlyAtDeploy(t *testing.T) {
	js := startService(t)
	adaptersOf := func(vm *object.VirtualMachine) int { return len(adapters(readTestVM(t, vm).Config.Hardware.Device)) }

	on := deploytest.NewVM("my-namespace", "net-on", model.VirtualMachineSpec{
		ClassName: "my-vm-class", StorageClass: "my-storage-class",
		Network: &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}},
	})
	on.Put(t, js, false)
	onVM := on.Deploy(t, vc, js, inventory.PhotonImage)
	waitCondition(t, js, on, model.ConditionNetworkReady, "True", "True")
	powerOn(t, onVM)
	on.Spec.Network.Disabled = true
	on.Put(t, js, false)
	_, st := on.WaitStatus(t, js, model.ServiceNetwork, "generation 2", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Generation == 2 })
	if n := adaptersOf(onVM); n != 1 {
		t.Errorf("%d adapters after disabling networking on a deployed VM, want 1 kept", n)
	}
	if s, _, _ := condition(st, model.ConditionNetworkReady); s != "True" {
		t.Errorf("NetworkReady %q, want True: the VM keeps its network", s)
	}

	off := deploytest.NewVM("my-namespace", "net-off", model.VirtualMachineSpec{
		ClassName: "my-vm-class", StorageClass: "my-storage-class",
		Network: &model.VirtualMachineNetworkSpec{Disabled: true},
	})
	off.Put(t, js, false)
	offVM := off.Deploy(t, vc, js, inventory.PhotonImage)
	off.WaitStatus(t, js, model.ServiceNetwork, "the VM configured", func(s events.Slice, st model.VirtualMachineStatus) bool {
		return st.Network != nil && st.Network.Config != nil
	})
	if n := adaptersOf(offVM); n != 0 {
		t.Fatalf("%d adapters on a VM deployed without networking", n)
	}
	off.Spec.Network = &model.VirtualMachineNetworkSpec{Interfaces: []model.VirtualMachineNetworkInterfaceSpec{iface("eth0", "VM Network")}}
	off.Put(t, js, false)
	_, st = off.WaitStatus(t, js, model.ServiceNetwork, "generation 2", func(s events.Slice, _ model.VirtualMachineStatus) bool { return s.Generation == 2 })
	if n := adaptersOf(offVM); n != 0 {
		t.Errorf("%d adapters after enabling networking on a deployed VM, want none", n)
	}
	if s, _, m := condition(st, model.ConditionNetworkReady); s != "True" || !strings.Contains(m, "deployed with networking disabled") {
		t.Errorf("NetworkReady %s %q, want True saying the VM was deployed without networking", s, m)
	}
}
