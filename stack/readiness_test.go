package main

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// probedVM is vm-example with a readiness probe run every second.
func probedVM(name, probe string) string {
	return strings.Replace(vmNamed(name, ""), "  bootstrap:", "  readinessProbe:\n    periodSeconds: 1\n    timeoutSeconds: 2\n"+probe+"  bootstrap:", 1)
}

// TestReadiness walks issue #13's readiness acceptance with kubectl wait: a VM whose
// guest heartbeat turns green and one whose guest (at a loopback address set in vcsim)
// listens on the probed port become Ready; one probed on a port nobody listens on does
// not, and its Ready condition says why. Only loopback addresses are ever dialled.
func TestReadiness(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	open := listener.Addr().(*net.TCPAddr).Port
	shut, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := shut.Addr().(*net.TCPAddr).Port
	shut.Close() // nobody listens there any more

	tp.apply(probedVM("heartbeat-vm", "    guestHeartbeat:\n      thresholdStatus: green\n"), "")
	tp.apply(probedVM("tcp-vm", "    tcpSocket:\n      port: "+strconv.Itoa(open)+"\n"), "")
	tp.apply(probedVM("closed-vm", "    tcpSocket:\n      port: "+strconv.Itoa(closed)+"\n"), "")
	for _, name := range []string{"heartbeat-vm", "tcp-vm", "closed-vm"} {
		tp.waitPower(name, "PoweredOn")
	}
	// Powered on, but vcsim's guests report nothing until told: not ready, no address.
	if out, err := tp.kubectlErr("wait", "--for=condition=Ready", "vm/tcp-vm", "-n", "my-namespace", "--timeout=3s"); err == nil {
		t.Errorf("tcp-vm Ready before its guest reports an address:\n%s", out)
	}
	if ip := tp.kubectl("get", "vm", "tcp-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.primaryIP4}"); ip != "" {
		t.Errorf("tcp-vm primaryIP4 %q before the guest reports one", ip)
	}

	setGuest(t, tp.vm(vc, "heartbeat-vm"), map[string]string{"guestHeartbeatStatus": "green"})
	for _, name := range []string{"tcp-vm", "closed-vm"} {
		setGuest(t, tp.vm(vc, name), map[string]string{"guest.ipAddress": "127.0.0.1"})
	}
	ipStack := &types.OptionValue{Key: "SET.guest.ipStack", Value: types.ArrayOfGuestStackInfo{GuestStackInfo: []types.GuestStackInfo{{
		DnsConfig: &types.NetDnsConfigInfo{IpAddress: []string{"127.0.0.53"}},
		IpRouteConfig: &types.NetIpRouteConfigInfo{IpRoute: []types.NetIpRouteConfigInfoIpRoute{
			{Network: "0.0.0.0", Gateway: types.NetIpRouteConfigInfoGateway{IpAddress: "127.0.0.1", Device: "0"}},
		}},
	}}}}
	task, err := tp.vm(vc, "tcp-vm").Reconfigure(t.Context(), types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{ipStack}})
	if err == nil {
		err = task.Wait(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"heartbeat-vm", "tcp-vm"} {
		if out, err := tp.kubectlErr("wait", "--for=condition=Ready", "vm/"+name, "-n", "my-namespace", "--timeout=60s"); err != nil {
			t.Errorf("kubectl wait for %s: %v\n%s", name, err, out)
		}
	}
	if out, err := tp.kubectlErr("wait", "--for=condition=Ready", "vm/closed-vm", "-n", "my-namespace", "--timeout=5s"); err == nil {
		t.Errorf("closed-vm Ready although nobody listens on its port:\n%s", out)
	}
	why := tp.kubectl("get", "vm", "closed-vm", "-n", "my-namespace", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")]['status','reason','message']}`)
	if !strings.HasPrefix(why, "False NotReady") || !strings.Contains(why, "127.0.0.1:"+strconv.Itoa(closed)) || !strings.Contains(why, "refused") {
		t.Errorf("closed-vm Ready condition %q, want False NotReady naming the refused connection to 127.0.0.1:%d", why, closed)
	}

	// kubectl get vm shows the Ready condition's status in its Ready column.
	for name, want := range map[string]string{"tcp-vm": "True", "closed-vm": "False"} {
		if got := tableCell(tp.kubectl("get", "vm", name, "-n", "my-namespace"), "READY"); got != want {
			t.Errorf("kubectl get vm %s: READY %q, want %s", name, got, want)
		}
	}

	// What the guest reports, through the API.
	tp.eventually("tcp-vm's guest network reported", func() bool {
		return tp.kubectl("get", "vm", "tcp-vm", "-n", "my-namespace", "-o", "jsonpath={.status.network.ipStacks[0].ipRoutes[0].gateway.address}") == "127.0.0.1"
	})
	if got := tp.kubectl("get", "vm", "tcp-vm", "-n", "my-namespace", "-o",
		"jsonpath={.status.network.primaryIP4} {.status.network.interfaces[0].name} {.status.network.interfaces[0].ip.addresses[0].address}"); got != "127.0.0.1 eth0 127.0.0.1" {
		t.Errorf("tcp-vm primaryIP4, interface, address = %q, want 127.0.0.1 eth0 127.0.0.1", got)
	}
	if id := tp.kubectl("get", "vm", "tcp-vm", "-n", "my-namespace", "-o", "jsonpath={.status.guest.guestID}"); id == "" {
		t.Error("status.guest.guestID is empty")
	}
}
