package power_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Of network's slice, power reads only the prerequisites of a power-on: a guest's Tools
// condition changing is answered without a reconcile (and its vCenter read), NetworkReady
// changing is reconciled.
func TestOnlyPrerequisiteConditionsConcernPower(t *testing.T) {
	h := start(t)
	v := h.powered("guest-conditions")
	network := func(ready metav1.ConditionStatus, tools metav1.ConditionStatus) {
		h.t.Helper()
		now := metav1.Now().Rfc3339Copy()
		conds := []metav1.Condition{
			{Type: model.ConditionBootstrapReady, Status: metav1.ConditionTrue, Reason: model.ReasonTrue, ObservedGeneration: v.obj.Generation, LastTransitionTime: now},
			{Type: model.ConditionNetworkReady, Status: ready, Reason: model.ReasonNotReady, ObservedGeneration: v.obj.Generation, LastTransitionTime: now},
			{Type: "VirtualMachineTools", Status: tools, Reason: "VirtualMachineToolsNotRunning", ObservedGeneration: v.obj.Generation, LastTransitionTime: now},
		}
		h.publish(v, model.ServiceNetwork, map[string]any{"conditions": conds})
		h.waitInputsHandled()
	}
	network(metav1.ConditionTrue, metav1.ConditionFalse)
	// A reconcile power's watch triggers (the power-on seen in vCenter) reads everything and
	// takes a change arriving while it waits with it: of three Tools-only changes, at least
	// one must find none waiting and be answered unconcerned.
	before := unconcernedOfPower(t)
	for _, tools := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionTrue} {
		network(metav1.ConditionTrue, tools)
	}
	if n := unconcernedOfPower(t) - before; n < 1 || n > 3 {
		t.Errorf("%v unconcerned answers to 3 changes of network's Tools condition, want 1 to 3", n)
	}
	answered := unconcernedOfPower(t)
	network(metav1.ConditionFalse, metav1.ConditionTrue)
	if unconcernedOfPower(t) != answered {
		t.Errorf("NetworkReady changing was answered unconcerned, want a reconcile")
	}
}

// waitInputsHandled waits until power's consumer of its inputs' slices acknowledged every
// slice stored so far.
func (h *harness) waitInputsHandled() {
	h.t.Helper()
	st, err := h.js.Stream(h.ctx, events.StreamStatus)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := st.Info(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	h.waitConsumed(events.StreamStatus, events.Durable(model.ServicePower+"-inputs"), info.State.LastSeq)
}

// waitConsumed waits until the stream's consumer has acknowledged every message up to seq.
func (h *harness) waitConsumed(stream, durable string, seq uint64) {
	h.t.Helper()
	acked := func() (uint64, int) {
		c, err := h.js.Consumer(h.ctx, stream, durable)
		if err != nil {
			h.t.Fatal(err)
		}
		info, err := c.Info(h.ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		return info.AckFloor.Stream, info.NumAckPending + int(info.NumPending)
	}
	h.waitUntil(durable+" caught up", func() bool { floor, pending := acked(); return floor >= seq && pending == 0 },
		func() string {
			floor, pending := acked()
			return fmt.Sprintf("ack floor %d, %d pending", floor, pending)
		})
}

// unconcernedOfPower is how many of power's reconciles of VMs this process answered as
// unconcerned so far.
func unconcernedOfPower(t *testing.T) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(reconcile.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "vmop_reconciles_unconcerned_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["service"] == model.ServicePower && labels["kind"] == "virtualmachines" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
