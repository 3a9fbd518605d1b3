package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// handler reconciles one VirtualMachine at a time (the loop serialises per object).
type handler struct {
	js       jetstream.JetStream
	vc       *govmomi.Client
	ipam     *allocator
	backings *backings
	dns      dnsDefaults
	now      func() time.Time
	// guests notices guest changes (guestwatch.go); requestAt asks for a reconcile at a
	// time: the next run of a readiness probe.
	guests    *guestWatch
	requestAt func(events.Ref, time.Time)
}

// waitingForVM is the message of the conditions until placement has created the VM.
const waitingForVM = "waiting for the VM to be created"

// reconcile makes the VM's adapters match the interfaces, gives them addresses, reports
// status.network and delivers the bootstrap data.
func (h *handler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceNetwork]
	if o.Deleting() {
		h.guests.forget(o.Ref)
		if !o.Slices[model.ServicePlacement].Released {
			// Placement has not let the VM go yet (a delete check waits, a destroy is
			// retried): it may still run with its addresses. Placement's release wakes us.
			return reconcile.Result{Keep: true}, nil
		}
		// Destroyed, its addresses go back to their pools; a VM left in vCenter
		// (skip-delete-platform) still runs with them, and keeps them.
		if _, left := o.Meta.Annotations[model.AnnotationSkipDeletePlatform]; !left {
			if err := h.ipam.release(ctx, o.Meta.UID); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.ReleasedKeeping(prev), nil
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	prevStatus := decodeStatus(prev)
	conds := reconcile.NewConditionSet(prevStatus.Conditions, o.Meta.Generation, h.now())
	r := report{vm: &vm, conds: conds, disabled: specDisabled(&vm)}

	sec := newSecrets(ctx, h.js, vm.Namespace)
	boot := planBootstrap(&vm, sec)
	placed, created := reconcile.Placed(o)
	if !created {
		r.networkReady(model.ReasonNotReady, waitingForVM)
		boot.ready(conds, waitingForVM)
		notProbed(conds, &vm, waitingForVM)
		res := r.result()
		res.Idle = true // placement's slice announces the VM
		return res, nil
	}
	mvm, vcVM, err := readVM(ctx, h.vc, placed, vm.Spec.InstanceUUID)
	if errors.Is(err, vcenter.ErrNotFound) {
		msg := fmt.Sprintf("no VM with instance UUID %q in vCenter", vm.Spec.InstanceUUID)
		h.guests.forget(o.Ref)
		r.networkReady(model.ReasonNotReady, msg)
		boot.ready(conds, msg)
		notProbed(conds, &vm, msg)
		return r.result(), nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}

	if implicitLinuxPrep(&vm, mvm) {
		boot = planBootstrap(&vm, sec)
	}

	// The adapters, their addresses and the bootstrap data that names them by MAC go to
	// vCenter in one reconfigure; a guest customization follows it.
	disabled, record := deployedDisabled(mvm, &vm)
	r.disabled = disabled
	ifaces := interfaces(&vm, disabled)
	nics, after, problem, err := h.adapterChanges(ctx, o.Meta.UID, mvm, &vm, ifaces)
	if err != nil {
		return reconcile.Result{}, err
	}
	var prevConfig *model.VirtualMachineNetworkConfigStatus
	if prevStatus.Network != nil {
		prevConfig = prevStatus.Network.Config
	}
	plans, err := h.plan(ctx, o.Meta.UID, ifaces, prevConfig, guestUses(mvm))
	if msg, ok := planProblem(err); ok {
		problem, plans, err = joinProblems(problem, msg), nil, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var spec types.VirtualMachineConfigSpec
	var cust customization
	if !boot.failed() && plans != nil && problem == "" {
		if spec, err = h.bootstrapConfig(mvm, &vm, &boot, plans, after); err != nil {
			return reconcile.Result{}, err
		}
		if cust, err = planCustomization(mvm, &vm, &boot, plans, after, h.dns, sec); err != nil {
			return reconcile.Result{}, err
		}
		cust.behindPending(mvm)
		if cust.due && extraConfigOf(mvm)[keyCustomizing] != cust.hash {
			spec.ExtraConfig = append(spec.ExtraConfig, &types.OptionValue{Key: keyCustomizing, Value: cust.hash})
			if boot.cloudInitPrep && !guestInfoTransport(mvm.Config.VAppConfig) {
				// Written with each hand-over only: vcsim does not keep the transport.
				spec.VAppConfig = &types.VmConfigSpec{OvfEnvironmentTransport: []string{transportGuestInfo}}
			}
		}
	}
	spec.DeviceChange = nics
	spec.ExtraConfig = append(spec.ExtraConfig, record...)
	if len(spec.DeviceChange) > 0 || len(spec.ExtraConfig) > 0 || spec.VAppConfig != nil {
		err := reconfigure(ctx, vcVM, spec)
		switch {
		case vcenter.IsFault(err):
			// vCenter refused the change: said in the conditions, not retried until the next change.
			if len(spec.DeviceChange) > 0 {
				problem = joinProblems(problem, fmt.Sprintf("changing the network adapters failed: %v", err))
			}
			if len(spec.ExtraConfig) > 0 || spec.VAppConfig != nil {
				boot.fail(model.ReasonError, fmt.Errorf("writing the bootstrap data failed: %v", err))
			}
		case err != nil:
			return reconcile.Result{}, err
		default:
			// A removed adapter's MAC goes back to the range once vCenter took the adapter
			// away (a crash before leaves it to the VM's deletion).
			if gone := goneMACs(spec.DeviceChange, after); len(gone) > 0 {
				if err := h.ipam.releaseMACs(ctx, o.Meta.UID, func(key string) bool { return !gone[key] }); err != nil {
					return reconcile.Result{}, err
				}
			}
			if mvm, _, err = readVM(ctx, h.vc, vcVM.Reference().Value, ""); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	mvm, waitCustomization, err := h.handOver(ctx, o, &vm, vcVM, mvm, cust, &boot)
	if err != nil {
		return reconcile.Result{}, err
	}

	// What the guest reports, never what it was only meant to have (guest.go, probe.go).
	r.network = guestNetwork(mvm, &vm, adapters(mvm.Config.Hardware.Device), plans)
	if plans != nil {
		r.network.Config = configStatus(&vm, plans, h.dns)
	}
	toolsCondition(conds, mvm.Guest)
	networkSyncedCondition(conds, plans, r.network)
	readiness(ctx, conds, &vm, mvm, r.network)
	h.guests.observed(o.Ref, vcVM.Reference().Value, mvm, vm.Spec.ReadinessProbe != nil)
	if p := vm.Spec.ReadinessProbe; p != nil && mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
		h.requestAt(o.Ref, h.now().Add(probePeriod(p)))
	}
	if problem != "" {
		r.networkReady(model.ReasonNotReady, problem)
	} else {
		r.networkReady("", "")
	}
	switch {
	case boot.failed():
		boot.ready(conds, "")
	case plans == nil || problem != "":
		boot.ready(conds, "waiting for the network adapters and addresses")
	default:
		boot.ready(conds, waitCustomization)
	}
	guestConditions(conds, mvm, boot.prep)
	return r.result(), nil
}

// adapterChanges are the device changes that make the VM's adapters match the
// interfaces, an adapter to add getting the MAC claimed for its interface, and the
// adapters once they are made. An unknown network or an adapter that can only be
// replaced while the VM is off is a problem to report, not an error to retry.
func (h *handler) adapterChanges(ctx context.Context, uid string, mvm mo.VirtualMachine, vm *model.VirtualMachine, ifaces []model.VirtualMachineNetworkInterfaceSpec) (changes []types.BaseVirtualDeviceConfigSpec, after []types.BaseVirtualDevice, problem string, err error) {
	have := adapters(mvm.Config.Hardware.Device)
	kinds, problem, err := h.adapterTypes(ctx, vm, len(ifaces))
	if err != nil || problem != "" {
		return nil, have, problem, err
	}
	want := make([]wantNIC, len(ifaces))
	for i, ifc := range ifaces {
		b, err := h.backings.get(ctx, networkName(ifc))
		if errors.Is(err, errNetworkNotFound) {
			return nil, have, fmt.Sprintf("interface %s: %v", ifc.Name, err), nil
		}
		if err != nil {
			return nil, have, "", err
		}
		want[i] = wantNIC{iface: ifc.Name, adapter: adapterType(kinds[i]), proto: kinds[i], network: networkName(ifc), backing: b,
			fixedMAC: strings.ToLower(ifc.MACAddr)}
	}
	keep, problem := keptAdapters(have, want, mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff)
	for i := keep; i < len(want); i++ {
		if want[i].fixedMAC != "" {
			// The interface's own MAC (a VPC network's), claimed so that no other VM's
			// adapter is given it.
			mine, err := h.ipam.claimKey(ctx, macKey(want[i].fixedMAC), holder(uid, want[i].iface), goneHolders(uid, ifaces))
			if err != nil {
				return nil, have, "", fmt.Errorf("MAC address of %s: %w", want[i].iface, err)
			}
			if !mine {
				return nil, have, fmt.Sprintf("interface %s: MAC address %s is another VM's", want[i].iface, want[i].fixedMAC), nil
			}
			want[i].mac = want[i].fixedMAC
			continue
		}
		var prev string // a replaced adapter's MAC, which its interface keeps
		if i < len(have) {
			prev = have[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress
		}
		if want[i].mac, err = h.ipam.claimMAC(ctx, holder(uid, want[i].iface), prev); err != nil {
			return nil, have, "", fmt.Errorf("MAC address of %s: %w", want[i].iface, err)
		}
	}
	changes, after = nicChanges(have, want, keep)
	return changes, after, problem, nil
}

// adapterTypes are the adapters of n interfaces: the class ConfigSpec's adapters in
// order, then VirtualVmxnet3 ones. The class is read from SPECS; a missing one is a problem.
func (h *handler) adapterTypes(ctx context.Context, vm *model.VirtualMachine, n int) ([]types.BaseVirtualDevice, string, error) {
	if n == 0 {
		return nil, "", nil
	}
	rec, err := events.LastSpec(ctx, h.js, events.Ref{Plural: "virtualmachineclasses", Namespace: vm.Namespace, Name: vm.Spec.ClassName})
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Op == events.OpDelete) {
		return nil, fmt.Sprintf("class %q not found: its network adapter types are unknown", vm.Spec.ClassName), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read class %s: %w", vm.Spec.ClassName, err)
	}
	var class model.VirtualMachineClass
	if err := json.Unmarshal(rec.Body, &class); err != nil {
		return nil, fmt.Sprintf("class %q cannot be read: %v", vm.Spec.ClassName, err), nil
	}
	fromClass, err := classAdapters(class.Spec.ConfigSpec)
	if err != nil {
		return nil, fmt.Sprintf("class %q: %v", vm.Spec.ClassName, err), nil
	}
	out := make([]types.BaseVirtualDevice, n)
	for i := range out {
		out[i] = adapterPrototype(defaultAdapter)
		if i < len(fromClass) {
			out[i] = fromClass[i]
		}
	}
	return out, "", nil
}

// report is the slice being built.
type report struct {
	vm       *model.VirtualMachine
	conds    *reconcile.ConditionSet
	network  *model.VirtualMachineNetworkStatus
	disabled bool // the VM goes without network adapters (deployedDisabled)
}

// networkReady sets VirtualMachineNetworkReady (absent when networking is disabled): True
// without a reason, NotReady with the message otherwise; True saying so when the spec
// enables networking on a VM deployed without it.
func (r *report) networkReady(reason, message string) {
	switch {
	case r.disabled && specDisabled(r.vm):
		return
	case r.disabled:
		// Power waits for this condition unless the spec disables networking.
		r.conds.Set(model.ConditionNetworkReady, metav1.ConditionTrue, "",
			"the VM was deployed with networking disabled: enabling it has no effect once the VM exists")
		return
	}
	if reason == "" {
		r.conds.Set(model.ConditionNetworkReady, metav1.ConditionTrue, "", "")
		return
	}
	r.conds.Set(model.ConditionNetworkReady, metav1.ConditionFalse, reason, message)
}

func (r *report) result() reconcile.Result {
	return reconcile.Result{Status: model.VirtualMachineStatus{Network: r.network, Conditions: r.conds.List()}}
}

// decodeStatus is the service's previous report; a slice that cannot be read only costs
// transition times and a previous address.
func decodeStatus(s events.Slice) model.VirtualMachineStatus {
	var st model.VirtualMachineStatus
	if len(s.Status) > 0 {
		_ = json.Unmarshal(s.Status, &st)
	}
	return st
}

func joinProblems(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
