package events_test

import (
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// The power-on check events are valid types whose subjects end in one word each, so an
// outside consumer can filter them.
func TestPowerOnCheckEventTypes(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm.a"}
	tests := []struct{ typ, subject string }{
		{events.TypeVirtualMachinePowerOnBlocked, "vmop.events.virtualmachines.ns.vm_a.poweronblocked"},
		{events.TypeVirtualMachinePowerOnUnblocked, "vmop.events.virtualmachines.ns.vm_a.poweronunblocked"},
	}
	for _, tt := range tests {
		if got := events.EventSubject(ref, tt.typ); got != tt.subject {
			t.Errorf("EventSubject(%s) = %s, want %s", tt.typ, got, tt.subject)
		}
		if err := events.PublishEvent(ctx, js, ref, tt.typ, "uid-1/"+tt.typ+"/1", map[string]any{}); err != nil {
			t.Errorf("PublishEvent(%s) = %v", tt.typ, err)
		}
	}
}
