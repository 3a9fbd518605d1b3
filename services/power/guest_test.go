package power_test

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// guestIs: power reports the guest ID.
func guestIs(id string) func(sliceStatus) bool {
	return func(s sliceStatus) bool { return s.Status.Guest != nil && s.Status.Guest.GuestID == id }
}

// spec.guestID is set on a powered-off VM and before a power-on, and reported; a running
// VM keeps its guest until it is powered off.
func TestGuestIDAppliedWhenOff(t *testing.T) {
	h := start(t)
	v := h.createVM("guest") // created as guestID (the harness's)
	v.obj.Spec.PowerState, v.obj.Spec.GuestID = model.PowerStateOff, "ubuntu64Guest"
	h.putSpec(v)
	h.readyInputs(v)
	got := h.waitStatus(v, "off with the spec's guest", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && guestIs("ubuntu64Guest")(s)
	})
	if cfg := h.vcConfig(v); cfg.GuestId != "ubuntu64Guest" {
		t.Errorf("vCenter guest %q, want ubuntu64Guest", cfg.GuestId)
	}
	if g := got.Status.Guest.GuestFullName; g == "" {
		t.Error("no guestFullName reported")
	}

	// Off to on in one change, with another guest: set before the power-on.
	v.obj.Spec.PowerState, v.obj.Spec.GuestID = model.PowerStateOn, "centos64Guest"
	v.obj.Generation++
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "on with the new guest", func(s sliceStatus) bool {
		return synced(model.PowerStateOn)(s) && guestIs("centos64Guest")(s)
	})
	if cfg := h.vcConfig(v); cfg.GuestId != "centos64Guest" {
		t.Errorf("vCenter guest %q, want centos64Guest", cfg.GuestId)
	}

	// Admission keeps a VM desired on from changing its guest (PWR-8); a record that does
	// anyway (e.g. written before that rule) leaves the running VM alone.
	v.obj.Spec.GuestID = "windows9_64Guest"
	v.obj.Generation++
	h.putSpec(v)
	h.readyInputs(v)
	h.waitStatus(v, "reconciled the new generation", func(s sliceStatus) bool {
		return s.Generation == v.obj.Generation && synced(model.PowerStateOn)(s)
	})
	if cfg := h.vcConfig(v); cfg.GuestId != "centos64Guest" {
		t.Errorf("running VM's guest changed to %q, want it left at centos64Guest", cfg.GuestId)
	}
	v.obj.Spec.PowerState = model.PowerStateOff
	v.obj.Generation++
	h.putSpec(v)
	h.waitStatus(v, "off with the newest guest", func(s sliceStatus) bool {
		return synced(model.PowerStateOff)(s) && guestIs("windows9_64Guest")(s)
	})
	if s := h.vcPower(v); s != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("VM is %s, want poweredOff", s)
	}
}
