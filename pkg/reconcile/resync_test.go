package reconcile

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vmop/vmop/pkg/events"
)

// A resync hands out its objects evenly over the period, not all at one tick, and ends
// with the period.
func TestResyncSpreadsOverThePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, period = 50, 10 * time.Second
		subjects := make([]string, n)
		for i := range subjects {
			subjects[i] = fmt.Sprint(i)
		}
		start := time.Now()
		var at []time.Duration
		if !spread(context.Background(), period, start, subjects, func(string) { at = append(at, time.Since(start)) }) {
			t.Fatal("spread ended early")
		}
		if got := time.Since(start); got != period {
			t.Errorf("spread returned after %v, want the period %v", got, period)
		}
		if len(at) != n {
			t.Fatalf("%d subjects enqueued, want %d", len(at), n)
		}
		for i, d := range at {
			due := period * time.Duration(i) / n
			if d < due || d > due+resyncStep+period/n {
				t.Errorf("subject %d enqueued at %v, want from %v to %v", i, d, due, due+resyncStep+period/n)
			}
		}
	})
}

// An Idle answer keeps its object out of the resync for idleTrust, not longer: another
// replica may have reconciled the object since.
func TestIdleAnswerIsTrustedForALimitedTime(t *testing.T) {
	l := &loop{idle: new(sync.Map)}
	subj := events.SpecSubject(events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm"})
	key := events.ObjectKey(subj)
	if l.isIdle(subj) {
		t.Error("an object never reconciled is idle")
	}
	l.noteIdle(key, true)
	if !l.isIdle(subj) {
		t.Error("an object that just answered Idle is not idle")
	}
	l.idle.Store(key, time.Now().Add(-idleTrust))
	if l.isIdle(subj) {
		t.Errorf("an Idle answer %v old still keeps the object out of the resync", idleTrust)
	}
	l.noteIdle(key, false)
	if _, ok := l.idle.Load(key); ok {
		t.Error("an answer that is not idle left the record")
	}
}
