package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineHardwareVersion(t *testing.T) {
	const path = "spec.minHardwareVersion"
	version := func(v int32) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.MinHardwareVersion = v }
	}
	off := func(vm *VirtualMachine) { vm.Spec.PowerState = PowerStateOff }
	runVMCases(t, []vmCase{
		{name: "HW-1 highest known version on create", change: version(22), code: 200},
		{name: "HW-1 unknown version on create", change: version(23), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "HW-1 below 13 is a stage-1 error", change: version(12), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "HW-1 unknown version on update", update: true, stored: off, change: version(99), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "HW-2 kept", update: true, stored: version(19), change: version(19), code: 200},
		{name: "HW-2 lowered", update: true, stored: func(vm *VirtualMachine) { off(vm); version(19)(vm) }, change: version(17),
			code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "HW-3 raised while stored desired PoweredOff", update: true, stored: off, change: version(21), code: 200},
		{name: "HW-3 raised together with powering off", update: true, change: func(vm *VirtualMachine) { off(vm); version(21)(vm) }, code: 200},
		{name: "HW-3 raised while desired PoweredOn", update: true, change: version(21), code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}

func TestVirtualMachineBootDiskCapacity(t *testing.T) {
	const path = "spec.advanced.bootDiskCapacity"
	capacity := func(q string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			c := resource.MustParse(q)
			vm.Spec.Advanced = &VirtualMachineAdvancedSpec{BootDiskCapacity: &c}
		}
	}
	runVMCases(t, []vmCase{
		{name: "HW-4 whole GiB", change: capacity("20Gi"), code: 200},
		{name: "HW-4 whole MiB in decimal bytes", change: capacity("1048576"), code: 200},
		{name: "HW-4 not a whole MiB", change: capacity("20G"), code: 422, path: path, typ: field.ErrorTypeInvalid},
		{name: "HW-4 grown on update", update: true, change: capacity("30Gi"), code: 200},
		{name: "HW-4 not a whole MiB on update", update: true, change: capacity("1500Ki"), code: 422, path: path, typ: field.ErrorTypeInvalid},
	})
}

func TestVirtualMachineReadinessProbe(t *testing.T) {
	probe := func(p VirtualMachineReadinessProbeSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.ReadinessProbe = &p }
	}
	tcp := func(port string) *TCPSocketAction {
		a := &TCPSocketAction{}
		if err := a.Port.UnmarshalJSON([]byte(port)); err != nil {
			t.Fatal(err)
		}
		return a
	}
	vpc := func(env *VMEnv) { env.Namespace.NetworkProvider = NetworkProviderVPC }
	restricted := func(env *VMEnv) { env.Namespace.RestrictedNetwork = true }
	runVMCases(t, []vmCase{
		{name: "RP-1 one action", change: probe(VirtualMachineReadinessProbeSpec{GuestHeartbeat: &GuestHeartbeatAction{}}), code: 200},
		{name: "RP-1 empty guestInfo does not count", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("22"), GuestInfo: []GuestInfoAction{}}), code: 200},
		{name: "RP-1 two actions", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("22"), GuestInfo: []GuestInfoAction{{Key: "ready"}}}),
			code: 422, path: "spec.readinessProbe", typ: field.ErrorTypeForbidden},
		{name: "RP-2 guest heartbeat with VPC", env: vpc, change: probe(VirtualMachineReadinessProbeSpec{GuestHeartbeat: &GuestHeartbeatAction{}}), code: 200},
		{name: "RP-2 TCP probe with VPC", env: vpc, change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("22")}),
			code: 422, path: "spec.readinessProbe.tcpSocket", typ: field.ErrorTypeForbidden},
		{name: "RP-3 port 6443 on a restricted network", env: restricted, change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("6443")}), code: 200},
		{name: "RP-3 port 22 on an open network", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("22")}), code: 200},
		{name: "RP-3 port 22 on a restricted network", env: restricted, change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("22")}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeNotSupported},
		{name: "RP-3 named port on a restricted network", env: restricted, change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp(`"https"`)}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeNotSupported},
		{name: "port 0", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("0")}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeInvalid},
		{name: "port above 65535", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("65536")}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeInvalid},
		{name: "port 65535", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp("65535")}), code: 200},
		{name: "port number as a string", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp(`"8080"`)}), code: 200},
		{name: "port number as a string out of range", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp(`"99999999999"`)}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeInvalid},
		{name: "IANA service name", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp(`"ssh"`)}), code: 200},
		{name: "port name that is no IANA service name", change: probe(VirtualMachineReadinessProbeSpec{TCPSocket: tcp(`"Not_A-Name"`)}),
			code: 422, path: "spec.readinessProbe.tcpSocket.port", typ: field.ErrorTypeInvalid},
		{name: "guestInfo value a regular expression", change: probe(VirtualMachineReadinessProbeSpec{GuestInfo: []GuestInfoAction{{Key: "ready", Value: "^(true|yes)$"}}}), code: 200},
		{name: "guestInfo value no regular expression", change: probe(VirtualMachineReadinessProbeSpec{GuestInfo: []GuestInfoAction{{Key: "ready", Value: "(true"}}}),
			code: 422, path: "spec.readinessProbe.guestInfo[0].value", typ: field.ErrorTypeInvalid},
		{name: "guestInfo empty key", change: probe(VirtualMachineReadinessProbeSpec{GuestInfo: []GuestInfoAction{{Key: "ready"}, {Key: ""}}}),
			code: 422, path: "spec.readinessProbe.guestInfo[1].key", typ: field.ErrorTypeRequired},
	})
}
