package events

import "time"

// SetRecheck makes the index look where the stream ends that often.
func (x *SpecIndex[T]) SetRecheck(d time.Duration) { x.recheck = d }
