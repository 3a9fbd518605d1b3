// Package vcenter is what every vmop service needs to talk to vCenter: a session over
// verified TLS that survives idle timeouts and vCenter's restarts, the ExtraConfig keys by
// which vmop recognises its VMs, and finding a VM by the instance UUID its spec fixes at
// admission (so a retried create finds the VM the first attempt made instead of making
// another).
package vcenter

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
)

// ExtraConfig keys vmop writes on the VMs it creates, and the admin's pause it reads.
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
	// KeyRestarting marks a restart recorded in KeyLastRestart whose operation is not
	// known to have run: vCenter's time before the record, set with it and cleared once
	// the operation is done, so that a crash in between neither loses nor repeats it.
	KeyRestarting = "vmop.power.restarting"
	// KeyAdminPause is set to "true" by a vSphere admin to pause the VM's reconciliation
	// (api-rules §4: the paused label then says "admin"); vmop only reads it.
	KeyAdminPause = "vmservice.virtualmachine.pause"
)

// ErrNotFound: no VM has the instance UUID.
var ErrNotFound = errors.New("vm not found")

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
