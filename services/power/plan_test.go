package power

import (
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

func TestPlan(t *testing.T) {
	const (
		on  = model.PowerStateOn
		off = model.PowerStateOff
		sus = model.PowerStateSuspended
	)
	open := gate{}
	checked := gate{checks: map[string]string{"backup": ""}}
	waiting := gate{waits: []string{"VirtualMachineStorageReady (not reported by storage)"}}
	tests := []struct {
		name              string
		desired, observed model.PowerState
		gate              gate
		want              opKind // "" for none
		why               string
	}{
		{name: "on when on", desired: on, observed: on, gate: checked},
		{name: "on from off", desired: on, observed: off, gate: open, want: opPowerOn},
		{name: "on from suspended", desired: on, observed: sus, gate: open, want: opPowerOn},
		{name: "on blocked by a check", desired: on, observed: off, gate: checked},
		{name: "on waits for inputs", desired: on, observed: sus, gate: waiting},
		{name: "off from on, checks do not matter", desired: off, observed: on, gate: checked, want: opPowerOff},
		{name: "off from suspended is hard", desired: off, observed: sus, gate: waiting, want: opPowerOff},
		{name: "off when off", desired: off, observed: off, gate: open},
		{name: "suspend from on", desired: sus, observed: on, gate: open, want: opSuspend},
		{name: "suspend from off is impossible", desired: sus, observed: off, gate: open, why: "only a powered-on VM can be suspended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, why := plan(tt.desired, tt.observed, tt.gate)
			var got opKind
			if op != nil {
				got = op.kind
				if op.mode != model.PowerOpModeHard {
					t.Errorf("mode = %s, want Hard", op.mode)
				}
			}
			if got != tt.want || why != tt.why {
				t.Errorf("plan = %q, %q; want %q, %q", got, why, tt.want, tt.why)
			}
		})
	}
}
