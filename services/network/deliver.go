package network

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// customization is the LinuxPrep or Sysprep guest customization of a VM and where its
// delivery stands.
type customization struct {
	spec *types.CustomizationSpec
	hash string
	// due: vCenter has not accepted this customization for the next power-on yet.
	due bool
	// after says why a due customization waits for a later power-on: vCenter holds an
	// earlier one for the next, and takes no second one. That power-on is not held back
	// (it is what lets the changed one be handed over), so this is a note, not a wait.
	after string
}

// behindPending makes a due customization wait when vCenter holds another one for the
// next power-on (handed over before the change, as keyCustomizing tells: a crash after
// this one's task leaves this one's hash there). Recorded as delivered, it would never be.
func (c *customization) behindPending(mvm mo.VirtualMachine) {
	if c.due && pendingCustomization(mvm) && extraConfigOf(mvm)[keyCustomizing] != c.hash {
		c.due = false
		c.after = "the guest customization handed over before the change is applied at the next power-on; " +
			"the changed one is handed over once the VM is off again"
	}
}

// planCustomization builds the customization of a prep bootstrap (LinuxPrep, Sysprep or
// cloudinitprep) and decides whether it is due: its hash differs from the one the VM
// records as delivered (api-rules §10), or customizeAtNextPowerOn asks for one while none
// is pending; never when it is false.
func planCustomization(mvm mo.VirtualMachine, vm *model.VirtualMachine, b *bootstrapPlan, plans []ifacePlan, cards []types.BaseVirtualDevice, dns dnsDefaults, sec *secrets) (customization, error) {
	if !b.prep {
		return customization{}, nil
	}
	var spec *types.CustomizationSpec
	var err error
	if b.cloudInitPrep {
		spec, err = cloudInitPrepSpec(vm, mvm, b.user, plans, cards, dns)
	} else {
		spec, err = customizationSpec(vm, plans, cards, dns, sec)
	}
	if err != nil {
		b.fail(model.ReasonInvalid, err)
		return customization{}, nil
	}
	hash, err := specHash(spec)
	if err != nil {
		return customization{}, err
	}
	c := customization{spec: spec, hash: hash}
	switch at := customizeAtNextPowerOn(vm); {
	case at != nil && !*at:
	case at != nil && *at:
		c.due = extraConfigOf(mvm)[keyCustomization] != hash || !pendingCustomization(mvm)
	default:
		c.due = extraConfigOf(mvm)[keyCustomization] != hash
	}
	return c, nil
}

// handedOver: vCenter holds this customization for the next power-on, recorded.
func (c customization) handedOver(mvm mo.VirtualMachine) bool {
	return c.spec != nil && pendingCustomization(mvm) && extraConfigOf(mvm)[keyCustomization] == c.hash
}

// cloudInitPrepSpec is the cloudinitprep delivery (api-rules §10): the same meta-data as
// the guestinfo delivery, with the network configuration in it, and the plain user data.
func cloudInitPrepSpec(vm *model.VirtualMachine, mvm mo.VirtualMachine, user string, plans []ifacePlan, cards []types.BaseVirtualDevice, dns dnsDefaults) (*types.CustomizationSpec, error) {
	meta, err := metaData(vm, instanceID(vm, mvm), plans, cards, dns)
	if err != nil {
		return nil, err
	}
	return &types.CustomizationSpec{Identity: &types.CustomizationCloudinitPrep{Metadata: meta, Userdata: user}}, nil
}

func customizeAtNextPowerOn(vm *model.VirtualMachine) *bool {
	switch b := vm.Spec.Bootstrap; {
	case b == nil:
		return nil
	case b.LinuxPrep != nil:
		return b.LinuxPrep.CustomizeAtNextPowerOn
	case b.Sysprep != nil:
		return b.Sysprep.CustomizeAtNextPowerOn
	}
	return nil
}

// handOver delivers a due customization (deliver) and, once vCenter holds it, writes a
// customizeAtNextPowerOn true back false. It returns the VM as read after and what the
// delivery waits for; a refusal by vCenter becomes the plan's reason, and a customization
// behind a pending one the plan's note.
func (h *handler) handOver(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine, cust customization, boot *bootstrapPlan) (mo.VirtualMachine, string, error) {
	wait := ""
	boot.note = cust.after
	if cust.due && !boot.failed() {
		var err error
		wait, err = deliver(ctx, vcVM, mvm, cust)
		switch {
		case vcenter.IsFault(err):
			boot.fail(model.ReasonError, fmt.Errorf("the guest customization was refused: %v", err))
		case err != nil:
			return mvm, "", err
		case wait == "":
			if mvm, _, err = readVM(ctx, h.vc, vcVM.Reference().Value, ""); err != nil {
				return mvm, "", err
			}
		}
	}
	if at := customizeAtNextPowerOn(vm); at != nil && *at && cust.handedOver(mvm) && !boot.failed() {
		if err := h.clearCustomizeAtNextPowerOn(ctx, o); err != nil {
			return mvm, "", err
		}
	}
	return mvm, wait, nil
}

// deliver hands a due customization to vCenter, exactly once: the hash is marked as
// being handed over (keyCustomizing, written with the reconfigure before this), the
// CustomizeVM task runs unless the VM already holds a pending customization of that hash
// (a crash after the task), and the hash is then recorded as delivered. It returns why
// delivery must wait, "" once recorded.
func deliver(ctx context.Context, vcVM *object.VirtualMachine, mvm mo.VirtualMachine, c customization) (string, error) {
	if mvm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		return "the changed guest customization is applied before the next power-on, once the VM is off", nil
	}
	ec := extraConfigOf(mvm)
	if ec[keyCustomizing] != c.hash {
		return "", fmt.Errorf("customization %s was not marked as being handed over", c.hash)
	}
	if pendingCustomization(mvm) {
		// Ours from before a crash (keyCustomizing says so), or vCenter refuses a second
		// one: record it.
	} else if err := customizeVM(ctx, vcVM, *c.spec); err != nil {
		return "", err
	} else if err := afterCustomizeVM(); err != nil {
		return "", err
	}
	return "", reconfigure(ctx, vcVM, types.VirtualMachineConfigSpec{
		ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: keyCustomization, Value: c.hash}},
	})
}

// afterCustomizeVM runs between the task and the record; tests make it fail as a crash
// would, to show a redelivery neither customizes twice nor skips the record.
var afterCustomizeVM = func() error { return nil }

func customizeVM(ctx context.Context, vm *object.VirtualMachine, spec types.CustomizationSpec) error {
	task, err := vm.Customize(ctx, spec)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	if err != nil {
		return fmt.Errorf("customize VM %s: %w", vm.Reference().Value, err)
	}
	return nil
}

func pendingCustomization(mvm mo.VirtualMachine) bool {
	return mvm.Config.Tools != nil && mvm.Config.Tools.PendingCustomization != ""
}

// extraConfigOf is the VM's ExtraConfig as strings.
func extraConfigOf(mvm mo.VirtualMachine) map[string]string {
	out := map[string]string{}
	for _, o := range mvm.Config.ExtraConfig {
		v := o.GetOptionValue()
		if s, ok := v.Value.(string); ok {
			out[v.Key] = s
		}
	}
	return out
}

// clearCustomizeAtNextPowerOn writes customizeAtNextPowerOn false once the customization it
// asked for is delivered (api-rules §10: "then the VM service writes false"), appending
// the record it reconciled with the field changed and the generation counted up,
// compare-and-swap on that record; a concurrent change fails the reconcile, whose retry
// sees the newer record.
func (h *handler) clearCustomizeAtNextPowerOn(ctx context.Context, o reconcile.Object) error {
	obj, err := model.DecodeObject(o.Spec.Body)
	if err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	spec, _ := obj["spec"].(map[string]any)
	b, _ := spec["bootstrap"].(map[string]any)
	for _, provider := range []string{"linuxPrep", "sysprep"} {
		if p, ok := b[provider].(map[string]any); ok {
			p["customizeAtNextPowerOn"] = false
		}
	}
	model.CountSpecChange(model.Child(obj, "metadata"))
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, h.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("clear customizeAtNextPowerOn of %s: %w", o.Ref, err)
	}
	return nil
}
