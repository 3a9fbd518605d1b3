package model

import "k8s.io/apimachinery/pkg/util/validation/field"

// restrictedNetworkProbePort is the one port a readiness probe may use in a namespace with
// a restricted network (RP-3): the Kubernetes API server's.
const restrictedNetworkProbePort = 6443

// validateReadinessProbe is RP-1..3: one probe action, and TCP probes only where the
// gateway's network can reach the VM.
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
	if p.TCPSocket == nil {
		return errs
	}
	if r.Env.Namespace.NetworkProvider == NetworkProviderVPC {
		errs = append(errs, field.Forbidden(path.Child("tcpSocket"), "TCP probes are not supported with the VPC network provider"))
	}
	if port := p.TCPSocket.Port; r.Env.Namespace.RestrictedNetwork && port.IntValue() != restrictedNetworkProbePort {
		errs = append(errs, field.NotSupported(path.Child("tcpSocket", "port"), port.String(), []string{"6443"}))
	}
	return errs
}
