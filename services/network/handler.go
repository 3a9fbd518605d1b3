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
	"github.com/vmware/govmomi/object"
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
}

// waitingForVM is the message of the conditions until placement has created the VM.
const waitingForVM = "waiting for the VM to be created"

// reconcile makes the VM's adapters match the interfaces, gives them addresses, reports
// status.network and delivers the bootstrap data.
func (h *handler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	prev := o.Slices[model.ServiceNetwork]
	if o.Deleting() {
		// Placement destroys the VM; the addresses go back to their pools now.
		if err := h.ipam.release(ctx, o.Meta.UID); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{Status: previousStatus(prev), Released: true}, nil
	}
	var vm model.VirtualMachine
	if err := json.Unmarshal(o.Spec.Body, &vm); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	prevStatus := decodeStatus(prev)
	conds := reconcile.NewConditionSet(prevStatus.Conditions, o.Meta.Generation, h.now())
	r := report{vm: &vm, conds: conds}

	boot := h.bootstrapPlan(&vm)
	placed, created := reconcile.Placed(o)
	if !created {
		r.networkReady(model.ReasonNotReady, waitingForVM)
		boot.ready(conds, waitingForVM)
		return r.result(), nil
	}
	mvm, vcVM, err := readVM(ctx, h.vc, placed, vm.Spec.InstanceUUID)
	if errors.Is(err, vcenter.ErrNotFound) {
		msg := fmt.Sprintf("no VM with instance UUID %q in vCenter", vm.Spec.InstanceUUID)
		r.networkReady(model.ReasonNotReady, msg)
		boot.ready(conds, msg)
		return r.result(), nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}

	// Adapters first: the addresses and the bootstrap data are about them.
	ifaces := interfaces(&vm)
	problem, err := h.ensureAdapters(ctx, vcVM, &mvm, &vm, ifaces)
	if err != nil {
		return reconcile.Result{}, err
	}
	cards := adapters(mvm.Config.Hardware.Device)

	var prevConfig *model.VirtualMachineNetworkConfigStatus
	if prevStatus.Network != nil {
		prevConfig = prevStatus.Network.Config
	}
	plans, err := h.plan(ctx, o.Meta.UID, ifaces, prevConfig)
	if msg, ok := planProblem(err); ok {
		problem, plans, err = joinProblems(problem, msg), nil, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if plans != nil {
		r.network = &model.VirtualMachineNetworkStatus{
			Config:     configStatus(&vm, plans, h.dns),
			Interfaces: interfaceStatus(cards, plans),
			PrimaryIP4: primaryIP4(guestIP(mvm), plans),
		}
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
		if err := h.deliver(ctx, vcVM, mvm, &vm, &boot, plans, cards); err != nil {
			return reconcile.Result{}, err
		}
		boot.ready(conds, "")
	}
	return r.result(), nil
}

// ensureAdapters makes the VM's adapters match the interfaces and re-reads the VM after a
// change. A vCenter fault, an unknown network or an adapter that can only be replaced
// while the VM is off is a problem to report, not an error to retry.
func (h *handler) ensureAdapters(ctx context.Context, vcVM *object.VirtualMachine, mvm *mo.VirtualMachine, vm *model.VirtualMachine, ifaces []model.VirtualMachineNetworkInterfaceSpec) (string, error) {
	kinds, problem, err := h.adapterTypes(ctx, vm, len(ifaces))
	if err != nil || problem != "" {
		return problem, err
	}
	want := make([]wantNIC, len(ifaces))
	for i, ifc := range ifaces {
		b, err := h.backings.get(ctx, networkName(ifc))
		if errors.Is(err, errNetworkNotFound) {
			return fmt.Sprintf("interface %s: %v", ifc.Name, err), nil
		}
		if err != nil {
			return "", err
		}
		want[i] = wantNIC{iface: ifc.Name, adapter: kinds[i], network: networkName(ifc), backing: b}
	}
	off := mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff
	changes, problem := nicChanges(adapters(mvm.Config.Hardware.Device), want, off)
	if len(changes) == 0 {
		return problem, nil
	}
	err = reconfigure(ctx, vcVM, types.VirtualMachineConfigSpec{DeviceChange: changes})
	if vcenter.IsFault(err) {
		return joinProblems(problem, fmt.Sprintf("changing the network adapters failed: %v", err)), nil
	}
	if err != nil {
		return "", err
	}
	if *mvm, _, err = readVM(ctx, h.vc, vcVM.Reference().Value, ""); err != nil {
		return "", err
	}
	return problem, nil
}

// adapterTypes are the adapter types of n interfaces: the class ConfigSpec's adapters in
// order, then VirtualVmxnet3. The class is read from SPECS; a missing one is a problem.
func (h *handler) adapterTypes(ctx context.Context, vm *model.VirtualMachine, n int) ([]string, string, error) {
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
	out := make([]string, n)
	for i := range out {
		out[i] = defaultAdapter
		if i < len(fromClass) {
			out[i] = fromClass[i]
		}
	}
	return out, "", nil
}

// report is the slice being built.
type report struct {
	vm      *model.VirtualMachine
	conds   *reconcile.ConditionSet
	network *model.VirtualMachineNetworkStatus
}

// networkReady sets VirtualMachineNetworkReady (absent when networking is disabled): True
// without a reason, NotReady with the message otherwise.
func (r *report) networkReady(reason, message string) {
	if r.vm.Spec.Network != nil && r.vm.Spec.Network.Disabled {
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

func previousStatus(prev events.Slice) any {
	if len(prev.Status) == 0 {
		return nil
	}
	return prev.Status
}

func guestIP(vm mo.VirtualMachine) string {
	if vm.Guest == nil {
		return ""
	}
	return vm.Guest.IpAddress
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
