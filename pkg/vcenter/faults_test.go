package vcenter_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// A failed task and a SOAP fault are vCenter's answer; an unreachable vCenter, or a call
// whose time ran out on the way, is unanswered: what it asked may be done or running.
func TestIsFault(t *testing.T) {
	sim := simulate(t)
	ctx, c, vm := t.Context(), sim.c, sim.vm
	// Powering on a VM that is on (vcsim starts its VMs) fails in the task.
	task, err := vm.PowerOn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	taskErr := task.Wait(ctx)
	// Reading a VM that does not exist is a SOAP fault.
	gone := object.NewVirtualMachine(c.Client, types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-404"})
	var mvm mo.VirtualMachine
	soapErr := gone.Properties(ctx, gone.Reference(), []string{"name"}, &mvm)

	unreachable := sim.endpoint
	unreachable.URL = &url.URL{Scheme: "https", Host: "127.0.0.1:1", Path: "/sdk", User: sim.endpoint.URL.User}
	_, dialErr := vcenter.Connect(ctx, unreachable)

	// A call whose time ran out on the way, as a wait that outlasts its deadline does.
	expired, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_, _, deadlineErr := vcenter.ReadVMConfig(expired, c, vm.Reference().Value, "", []string{"name"})

	tests := []struct {
		name       string
		err        error
		fault      bool // IsFault
		unanswered bool // Unanswered
	}{
		{"failed task", taskErr, true, false},
		{"wrapped failed task", fmt.Errorf("power on: %w", taskErr), true, false},
		{"soap fault", fmt.Errorf("read: %w", soapErr), true, false},
		{"unreachable", dialErr, false, true},
		{"time out on the way", deadlineErr, false, true},
		{"other", errors.New("boom"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the setup produced no error")
			}
			if got := vcenter.IsFault(tt.err); got != tt.fault {
				t.Errorf("IsFault(%v) = %v, want %v", tt.err, got, tt.fault)
			}
			if got := vcenter.Unanswered(tt.err); got != tt.unanswered {
				t.Errorf("Unanswered(%v) = %v, want %v", tt.err, got, tt.unanswered)
			}
		})
	}
}
