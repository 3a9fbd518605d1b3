package vcenter_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// Each SOAP call is counted by method and result, and each waited task's duration by
// task and result.
func TestMetricsCountCallsAndTasks(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(vcenter.Collectors()...)
	sim := simulate(t)
	ctx := t.Context()
	count := func(metric string, labels ...string) float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, f := range families {
			if f.GetName() != metric {
				continue
			}
		sample:
			for _, m := range f.GetMetric() {
				have := map[string]string{}
				for _, l := range m.GetLabel() {
					have[l.GetName()] = l.GetValue()
				}
				for i := 0; i+1 < len(labels); i += 2 {
					if have[labels[i]] != labels[i+1] {
						continue sample
					}
				}
				sum += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
			}
		}
		return sum
	}
	before := count("vmop_vcenter_calls_total", "method", "PowerOffVM_Task", "result", "ok")
	beforeTasks := count("vmop_vcenter_task_duration_seconds", "task", "VirtualMachine.powerOff", "result", "success")
	beforeFailed := count("vmop_vcenter_task_duration_seconds", "task", "VirtualMachine.powerOff", "result", "error")
	for range 2 { // the second fails: off already
		task, err := sim.vm.PowerOff(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = vcenter.WaitTask(ctx, task)
	}
	if got := count("vmop_vcenter_calls_total", "method", "PowerOffVM_Task", "result", "ok") - before; got != 2 {
		t.Errorf("PowerOffVM_Task calls counted: %v, want 2", got)
	}
	if got := count("vmop_vcenter_task_duration_seconds", "task", "VirtualMachine.powerOff", "result", "success") - beforeTasks; got != 1 {
		t.Errorf("successful power-off tasks: %v, want 1", got)
	}
	if got := count("vmop_vcenter_task_duration_seconds", "task", "VirtualMachine.powerOff", "result", "error") - beforeFailed; got != 1 {
		t.Errorf("failed power-off tasks: %v, want 1", got)
	}
	if count("vmop_vcenter_call_duration_seconds", "method", "PowerOffVM_Task") < 2 {
		t.Error("the power-off calls were not timed")
	}
	// A fault answered by vCenter is a "fault", not an "ok".
	beforeFaults := count("vmop_vcenter_calls_total", "method", "PowerOffVM_Task", "result", "fault")
	gone := object.NewVirtualMachine(sim.c.Client, types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-gone"})
	if _, err := gone.PowerOff(ctx); err == nil {
		t.Fatal("powering off a VM that does not exist succeeded")
	}
	if got := count("vmop_vcenter_calls_total", "method", "PowerOffVM_Task", "result", "fault") - beforeFaults; got != 1 {
		t.Errorf("faults counted: %v, want 1", got)
	}
}
