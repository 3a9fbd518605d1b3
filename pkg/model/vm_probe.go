package model

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// restrictedNetworkProbePort is the one port a readiness probe may use in a namespace with
// a restricted network (RP-3): the Kubernetes API server's.
const restrictedNetworkProbePort = 6443

// validateReadinessProbe is RP-1..3: one probe action, and TCP probes only where the
// gateway's network can reach the VM; and what the probe runs must be runnable, as VM
// Operator's API describes it: a port number from 1 to 65535 or an IANA service name, a
// guestInfo key, and values that are RE2 regular expressions.
func validateReadinessProbe(r *vmReq) field.ErrorList {
	p := r.New.Spec.ReadinessProbe
	if p == nil {
		return nil
	}
	path := specPath.Child("readinessProbe")
	actions := 0
	for _, set := range []bool{p.TCPSocket != nil, p.GuestHeartbeat != nil, len(p.GuestInfo) > 0} {
		if set {
			actions++
		}
	}
	var errs field.ErrorList
	if actions > 1 {
		errs = append(errs, field.Forbidden(path, "only one of tcpSocket, guestHeartbeat and guestInfo may be set"))
	}
	for i, gi := range p.GuestInfo {
		gpath := path.Child("guestInfo").Index(i)
		if gi.Key == "" {
			errs = append(errs, field.Required(gpath.Child("key"), "the guestinfo key to read"))
		}
		if _, err := regexp.Compile(gi.Value); err != nil {
			errs = append(errs, field.Invalid(gpath.Child("value"), gi.Value, "not an RE2 regular expression: "+err.Error()))
		}
	}
	if p.TCPSocket == nil {
		return errs
	}
	if detail := invalidProbePort(p.TCPSocket.Port); detail != "" {
		errs = append(errs, field.Invalid(path.Child("tcpSocket", "port"), p.TCPSocket.Port.String(), detail))
	}
	if r.Env.Namespace.NetworkProvider == NetworkProviderVPC {
		errs = append(errs, field.Forbidden(path.Child("tcpSocket"), "TCP probes are not supported with the VPC network provider"))
	}
	if port := p.TCPSocket.Port; r.Env.Namespace.RestrictedNetwork && port.IntValue() != restrictedNetworkProbePort {
		errs = append(errs, field.NotSupported(path.Child("tcpSocket", "port"), port.String(), []string{"6443"}))
	}
	return errs
}

// invalidProbePort says why a probe port is neither a number from 1 to 65535 (also
// written as a string of digits) nor an IANA service name; "" when it is one.
func invalidProbePort(p intstr.IntOrString) string {
	n := p.IntVal
	if p.Type == intstr.String {
		v, err := strconv.Atoi(p.StrVal)
		if err != nil {
			if msgs := validation.IsValidPortName(p.StrVal); len(msgs) > 0 {
				return "neither a port number nor an IANA service name: " + msgs[0]
			}
			return ""
		}
		n = int32(min(max(v, -1), 1<<16)) // out of range either way when it does not fit
	}
	if n < 1 || n > 65535 {
		return "must be between 1 and 65535, inclusive"
	}
	return ""
}
