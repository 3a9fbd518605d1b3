package power

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmware/govmomi/vim25/types"
)

// page builds a latestPage, newest first, from event keys.
func page(keys ...int32) []types.BaseEvent {
	out := make([]types.BaseEvent, len(keys))
	for i, k := range keys {
		out[i] = &types.VmPoweredOffEvent{VmEvent: types.VmEvent{Event: types.Event{Key: k}}}
	}
	return out
}

func TestEventCursor(t *testing.T) {
	const size = 3
	steps := []struct {
		page  []types.BaseEvent
		fresh []int32 // oldest first
		gap   bool
	}{
		{page: page(5, 4), fresh: []int32{4, 5}, gap: true}, // the first page: what came before the watch
		{page: page(7, 5, 4), fresh: []int32{7}},
		{page: page(7, 5, 4)}, // nothing new
		{page: page(9, 8, 7), fresh: []int32{8, 9}},
		{page: page(14, 12, 11), fresh: []int32{11, 12, 14}, gap: true}, // a full page of news: some may be lost
		{page: page(), fresh: nil},
	}
	c := newEventCursor()
	for i, s := range steps {
		fresh, gap := c.advance(s.page, size)
		var keys []int32
		for _, e := range fresh {
			keys = append(keys, e.GetEvent().Key)
		}
		if diff := cmp.Diff(s.fresh, keys); diff != "" || gap != s.gap {
			t.Errorf("step %d: fresh (-want +got):\n%s gap = %v, want %v", i, diff, gap, s.gap)
		}
	}
}
