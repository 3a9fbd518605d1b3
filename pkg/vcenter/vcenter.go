// Package vcenter is what every vmop service needs to talk to vCenter: a session that
// survives idle timeouts, the ExtraConfig keys by which vmop recognises its VMs, and
// finding a VM by the instance UUID its spec fixes at admission (so a retried create finds
// the VM the first attempt made instead of making another).
package vcenter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session/keepalive"
)

// ExtraConfig keys vmop writes on the VMs it creates.
const (
	KeyObject = "vmop.object" // "<namespace>/<name>" of the VirtualMachine object
	KeyUID    = "vmop.uid"    // metadata.uid of the object, telling incarnations apart
	// KeyLastRestart records the last restart performed for spec.nextRestartTime, as
	// upstream's vmservice.lastRestartTime does, so a restart happens once per value.
	KeyLastRestart = "vmservice.lastRestartTime"
	// KeySoftPower records a guest shutdown or standby the power service asked for:
	// "<desired state> <generation> <deadline>", so that the TrySoft deadline survives a
	// restart of the service and the guest is asked once.
	KeySoftPower = "vmop.power.soft"
)

// maxIdleConns bounds the idle connections a service keeps to vCenter: above its worker
// count, so the connections its workers use stay open between calls.
const maxIdleConns = 32

// ErrNotFound: no VM has the instance UUID.
var ErrNotFound = errors.New("vm not found")

// Connect logs in to the vCenter at u (credentials in u.User) and keeps the session
// from idling out.
func Connect(ctx context.Context, u *url.URL) (*govmomi.Client, error) {
	vc, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		return nil, fmt.Errorf("connect to vCenter %s: %w", u.Host, err)
	}
	// net/http keeps 2 idle connections per host by default: a service with more calls in
	// flight would close the rest after each call and pay a TLS handshake on the next one.
	vc.Client.DefaultTransport().MaxIdleConnsPerHost = maxIdleConns
	vc.RoundTripper = keepalive.NewHandlerSOAP(vc.RoundTripper, time.Minute, nil)
	return vc, nil
}

// FindVM returns the VM whose instance UUID is uuid. The search spans every datacenter
// (FindByUuid without one), which saves the inventory walk that finding one would take.
func FindVM(ctx context.Context, c *govmomi.Client, uuid string) (*object.VirtualMachine, error) {
	instance := true
	ref, err := object.NewSearchIndex(c.Client).FindByUuid(ctx, nil, uuid, true, &instance)
	if err != nil {
		return nil, fmt.Errorf("find VM %s: %w", uuid, err)
	}
	if ref == nil {
		return nil, ErrNotFound
	}
	return object.NewVirtualMachine(c.Client, ref.Reference()), nil
}
