package network

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// The probe's period and a TCP probe's timeout when the spec gives none (VM Operator's).
const (
	defaultProbePeriod  = 10 * time.Second
	defaultProbeTimeout = 10 * time.Second
)

// probePeriod is how often the VM's readiness probe runs.
func probePeriod(p *model.VirtualMachineReadinessProbeSpec) time.Duration {
	if p.PeriodSeconds > 0 {
		return time.Duration(p.PeriodSeconds) * time.Second
	}
	return defaultProbePeriod
}

// probeTimeout is how long a TCP probe may take to connect (admission keeps it 1-60s).
func probeTimeout(p *model.VirtualMachineReadinessProbeSpec) time.Duration {
	if p.TimeoutSeconds > 0 {
		return time.Duration(p.TimeoutSeconds) * time.Second
	}
	return defaultProbeTimeout
}

// notProbed sets Ready False while the probe cannot run yet: the VM is not created.
func notProbed(conds *reconcile.ConditionSet, vm *model.VirtualMachine, why string) {
	if vm.Spec.ReadinessProbe != nil {
		conds.Set(model.ConditionReady, metav1.ConditionFalse, model.ReasonNotReady, why)
	}
}

// readiness runs the VM's readiness probe, if it has one, and sets Ready from its
// result (api-rules §8): True with reason Ready, False NotReady with what failed,
// Unknown when the probe cannot tell. observed is what the guest reports of its network.
func readiness(ctx context.Context, conds *reconcile.ConditionSet, vm *model.VirtualMachine, mvm mo.VirtualMachine, observed *model.VirtualMachineNetworkStatus) {
	p := vm.Spec.ReadinessProbe
	if p == nil {
		return
	}
	var status metav1.ConditionStatus
	var msg string
	switch {
	case mvm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn:
		status, msg = metav1.ConditionFalse, "the VM is not powered on"
	case p.TCPSocket != nil:
		status, msg = probeTCP(ctx, p, observed)
	case p.GuestHeartbeat != nil:
		status, msg = probeHeartbeat(p.GuestHeartbeat, mvm.GuestHeartbeatStatus)
	case len(p.GuestInfo) > 0:
		status, msg = probeGuestInfo(p.GuestInfo, mvm.Config)
	default:
		status, msg = metav1.ConditionUnknown, "the readiness probe names no action"
	}
	reason := map[metav1.ConditionStatus]string{
		metav1.ConditionTrue: model.ReasonReady, metav1.ConditionFalse: model.ReasonNotReady, metav1.ConditionUnknown: model.ReasonUnknown,
	}[status]
	conds.Set(model.ConditionReady, status, reason, msg)
}

// probeTCP opens a TCP connection to the probe's host, else to the address the guest
// reports (never one it was only meant to have), and says why when it cannot.
func probeTCP(ctx context.Context, p *model.VirtualMachineReadinessProbeSpec, observed *model.VirtualMachineNetworkStatus) (metav1.ConditionStatus, string) {
	host := p.TCPSocket.Host
	if host == "" {
		host = observed.PrimaryIP4
		if host == "" {
			host = observed.PrimaryIP6
		}
	}
	if host == "" {
		return metav1.ConditionFalse, "the guest reports no IP address to probe"
	}
	port, err := probePort(p.TCPSocket.Port)
	if err != nil {
		return metav1.ConditionUnknown, err.Error()
	}
	// The probe runs in a reconcile worker: its timeout, not the kernel's, bounds the wait.
	ctx, cancel := context.WithTimeout(ctx, probeTimeout(p))
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return metav1.ConditionFalse, fmt.Sprintf("TCP probe failed: %v", err)
	}
	_ = conn.Close() // only the connection's opening is probed
	return metav1.ConditionTrue, ""
}

// probePort is the port number, or the TCP port of an IANA service name.
func probePort(p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	port, err := net.LookupPort("tcp", p.StrVal)
	if err != nil {
		return 0, fmt.Errorf("TCP probe: port %q: %v", p.StrVal, err)
	}
	return port, nil
}

// heartbeatRank orders the heartbeat colours; gray means VMware Tools is not running.
var heartbeatRank = map[types.ManagedEntityStatus]int{
	types.ManagedEntityStatusGray: 0, types.ManagedEntityStatusRed: 1,
	types.ManagedEntityStatusYellow: 2, types.ManagedEntityStatusGreen: 3,
}

// probeHeartbeat compares the guest heartbeat with the threshold (green by default).
func probeHeartbeat(a *model.GuestHeartbeatAction, hb types.ManagedEntityStatus) (metav1.ConditionStatus, string) {
	threshold := types.ManagedEntityStatus(a.ThresholdStatus)
	if threshold == "" {
		threshold = types.ManagedEntityStatusGreen
	}
	have, known := heartbeatRank[hb]
	if !known {
		return metav1.ConditionUnknown, "vCenter reports no guest heartbeat"
	}
	if have < heartbeatRank[threshold] {
		return metav1.ConditionFalse, fmt.Sprintf("the guest heartbeat is %s, below the threshold %s", hb, threshold)
	}
	return metav1.ConditionTrue, ""
}

// probeGuestInfo checks that every listed guestinfo key is set and matches its regular
// expression. Values are never quoted in the message: conditions are published as
// events, and a guestinfo key may hold secrets (user data).
func probeGuestInfo(actions []model.GuestInfoAction, cfg *types.VirtualMachineConfigInfo) (metav1.ConditionStatus, string) {
	var ec object.OptionValueList
	if cfg != nil {
		ec = cfg.ExtraConfig
	}
	for _, a := range actions {
		key := "guestinfo." + a.Key
		v, ok := ec.GetString(key)
		if !ok {
			return metav1.ConditionFalse, key + " is not set"
		}
		if a.Value == "" {
			continue
		}
		re, err := regexp.Compile(a.Value)
		if err != nil {
			return metav1.ConditionUnknown, fmt.Sprintf("the value of %s is not a regular expression: %v", key, err)
		}
		if !re.MatchString(v) {
			return metav1.ConditionFalse, fmt.Sprintf("%s does not match %q", key, a.Value)
		}
	}
	return metav1.ConditionTrue, ""
}
