package power

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

func TestSyncCondition(t *testing.T) {
	checks := map[string]string{"backup": "first backup", "av": ""}
	storage := "VirtualMachineStorageReady (not reported by storage)"
	tests := []struct {
		name    string
		state   syncState
		status  metav1.ConditionStatus
		reason  string
		message string
		blocked bool
	}{
		{name: "synced", state: syncState{desired: model.PowerStateOff, observed: model.PowerStateOff},
			status: metav1.ConditionTrue, reason: model.ReasonSynced, message: "PoweredOff"},
		{name: "waiting for inputs", state: syncState{desired: model.PowerStateOn, observed: model.PowerStateOff, waits: []string{storage}},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced,
			message: "desired PoweredOn, observed PoweredOff: waiting for " + storage},
		{name: "no VM yet", state: syncState{desired: model.PowerStateOff, note: "waiting for the VM to be created"},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced,
			message: "desired PoweredOff, observed none: waiting for the VM to be created"},
		{name: "blocked names the checks, then the rest", state: syncState{desired: model.PowerStateOn, observed: model.PowerStateSuspended, checks: checks, waits: []string{storage}},
			status: metav1.ConditionFalse, reason: "PowerOnBlocked", blocked: true,
			message: `desired PoweredOn, observed Suspended: power-on blocked by checks av="", backup="first backup"; waiting for ` + storage},
		{name: "checks of a VM not created yet are not its blocker yet", state: syncState{desired: model.PowerStateOn, checks: checks, waits: []string{"VirtualMachineCreated (not reported by placement)"}},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced,
			message: "desired PoweredOn, observed none: waiting for VirtualMachineCreated (not reported by placement)"},
		{name: "checks of a VM that runs block nothing", state: syncState{desired: model.PowerStateOn, observed: model.PowerStateOn, checks: checks},
			status: metav1.ConditionTrue, reason: model.ReasonSynced, message: "PoweredOn"},
		{name: "a held-back restart is not synced, without the power-on waits", state: syncState{desired: model.PowerStateOn, observed: model.PowerStateOn, waits: []string{storage}, restartNote: "restart requested at T waits: VMware Tools are not running"},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced,
			message: "desired PoweredOn, observed PoweredOn: restart requested at T waits: VMware Tools are not running"},
		{name: "waiting for the guest", state: syncState{desired: model.PowerStateOff, observed: model.PowerStateOn, note: "waiting for the guest to shut down (powerOffMode TrySoft) until 2025-06-01T12:00:00Z; then acting hard (power off)"},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced,
			message: "desired PoweredOff, observed PoweredOn: waiting for the guest to shut down (powerOffMode TrySoft) until 2025-06-01T12:00:00Z; then acting hard (power off)"},
		{name: "failed task", state: syncState{desired: model.PowerStateOff, observed: model.PowerStateOn, note: "power off failed: boom"},
			status: metav1.ConditionFalse, reason: model.ReasonNotSynced, message: "desired PoweredOff, observed PoweredOn: power off failed: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.state.condition()
			want := metav1.Condition{Type: model.ConditionPowerStateSynced, Status: tt.status, Reason: tt.reason, Message: tt.message}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if got := tt.state.blocked(); got != tt.blocked {
				t.Errorf("blocked = %v, want %v", got, tt.blocked)
			}
		})
	}
}
