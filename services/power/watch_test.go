package power

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
)

// vmEvents builds events, in the order given, from event keys.
func vmEvents(keys ...int32) []types.BaseEvent {
	out := make([]types.BaseEvent, len(keys))
	for i, k := range keys {
		out[i] = &types.VmPoweredOffEvent{VmEvent: types.VmEvent{Event: types.Event{Key: k}}}
	}
	return out
}

func TestEventCursor(t *testing.T) {
	steps := []struct {
		read  []types.BaseEvent
		fresh []int32
	}{
		{read: vmEvents(4, 5), fresh: []int32{4, 5}},
		{read: vmEvents(5, 7), fresh: []int32{7}}, // a reset collector repeats its latest page
		{read: vmEvents(7)},                       // nothing new
		{read: vmEvents(8, 9, 11), fresh: []int32{8, 9, 11}},
		{read: nil},
	}
	var c eventCursor
	for i, s := range steps {
		var keys []int32
		for _, e := range c.advance(s.read) {
			keys = append(keys, e.GetEvent().Key)
		}
		if diff := cmp.Diff(s.fresh, keys); diff != "" {
			t.Errorf("step %d: fresh (-want +got):\n%s", i, diff)
		}
	}
	if c.last != 11 {
		t.Errorf("cursor at %d, want 11", c.last)
	}
}
