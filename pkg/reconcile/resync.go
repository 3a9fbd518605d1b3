package reconcile

import (
	"context"
	"slices"
	"time"

	"github.com/vmop/vmop/pkg/events"
)

// resyncRate bounds how many objects per second one loop's resync reconciles: with many
// objects the round takes longer than Config.Resync rather than the service more CPU, so
// that a stack with nothing changing stays quiet whatever its size. A reconcile costs
// about 6 ms of CPU in all (its lease, NATS reads, vCenter calls, the NATS server's share)
// and five loops resync a VM: at 3 a second each, 10,000 quiet VMs kept 15% of a core
// busy. At 1 a round over them takes 2.8 hours, still well inside the 10 hours
// controller-runtime's managers (VM Operator's) resync at; every change still comes
// through the consumers at once.
const resyncRate = 1

// resyncStep is the shortest pause between two portions of a resync: with many objects
// each wake-up queues several, rather than one timer per object.
const resyncStep = 100 * time.Millisecond

// resync re-reconciles every object but the idle ones (Result.Idle) once per period
// (Config.Resync, or longer at resyncRate), spread evenly over the period rather than all
// at one tick, so that a service with thousands of objects works at a steady trickle
// instead of a burst (and its queue never holds them all at once). The first round starts
// one period after the loop: the consumers have just read everything.
func (l *loop) resync(ctx context.Context) error {
	wait := time.NewTimer(l.cfg.Resync)
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-wait.C:
	}
	for {
		start := time.Now()
		subjects, err := events.Subjects(ctx, l.js, events.StreamSpecs, events.SpecFilter(l.cfg.Plural))
		if err != nil && ctx.Err() == nil {
			l.cfg.Logger.Warn("resync", "service", l.cfg.Service, "err", err)
		}
		// An idle object has nothing to look at outside NATS: its messages reconcile it.
		// Left out of the round, and passed over when its turn comes if it became idle
		// since (a round over many objects lasts hours).
		all := len(subjects)
		subjects = slices.DeleteFunc(subjects, l.isIdle)
		resyncRounds.WithLabelValues(l.cfg.Service, l.cfg.Plural).Inc()
		resyncIdle.WithLabelValues(l.cfg.Service, l.cfg.Plural).Set(float64(all - len(subjects)))
		period := max(l.cfg.Resync, time.Duration(len(subjects))*time.Second/resyncRate)
		if !spread(ctx, period, start, subjects, func(subj string) {
			if !l.isIdle(subj) {
				l.enqueue(ctx, subj)
			}
		}) {
			return nil
		}
	}
}

// spread hands each subject to enqueue at its share of the period that began at start,
// and returns when the period is over; false when ctx ended first.
func spread(ctx context.Context, period time.Duration, start time.Time, subjects []string, enqueue func(string)) bool {
	n := len(subjects)
	step := max(period/time.Duration(max(n, 1)), resyncStep)
	timer := time.NewTimer(0)
	defer timer.Stop()
	next := 0
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
		elapsed := time.Since(start)
		for due := dueBy(n, elapsed, period); next < due; next++ {
			enqueue(subjects[next])
		}
		if elapsed >= period {
			return true
		}
		timer.Reset(min(step, period-elapsed))
	}
}

// dueBy is how many of n subjects spread over period are due once elapsed has passed: the
// first at once, the last by the period's end. In floating point: n·elapsed in
// nanoseconds overflows an int64 past ~96,000 subjects (the period is at least n seconds).
func dueBy(n int, elapsed, period time.Duration) int {
	if elapsed >= period {
		return n
	}
	return min(n, int(float64(n)*elapsed.Seconds()/period.Seconds())+1)
}

// idleTrust is how long an object's Idle answer keeps it out of the resync. Another
// replica may have reconciled the object since (a message reaches one replica of a
// service): a replica's record can be stale, and the object then has a vCenter side this
// replica does not resync. The other replica does; should it go away for good, this one
// looks again within idleTrust, the 10 hours controller-runtime resyncs at.
const idleTrust = 10 * time.Hour

// isIdle reports whether the object of a spec subject is idle (Result.Idle), as answered
// less than idleTrust ago.
func (l *loop) isIdle(subj string) bool {
	since, ok := l.idle.Load(events.ObjectKey(subj))
	return ok && time.Since(since.(time.Time)) < idleTrust
}
