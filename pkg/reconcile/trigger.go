package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// Trigger runs reconciles that no stream announces, e.g. a vCenter watch seeing a VM
// powered off behind the service's back, through the same path as Run: latest spec and
// slices in, the service's whole slice out.
//
// Run's per-object queue does not see these reconciles, so the service runs its loop with
// [Trigger.Run] instead of Run: both paths then take the same per-object lock and an
// object is never reconciled twice at the same time, nor acted on with an older spec than
// the reconcile before, and slices are published in the order the reconciles ran.
type Trigger struct {
	js    jetstream.JetStream
	cfg   Config
	f     Func
	q     *events.KeyedQueue
	locks events.KeyedLocks // by object: Run's reconciles and triggered ones
	jobs  sync.WaitGroup    // requested reconciles not finished yet
	idle  sync.Map          // the loop's idle objects (Result.Idle), which requested reconciles update too

	mu       sync.Mutex
	waiting  map[string]bool      // objects with a requested reconcile that has not read them yet
	ran      map[string]released  // by object: when a requested reconcile last released its lock
	pruneAt  int                  // the size of ran at which old entries are dropped next
	failures map[string]int       // consecutive failed reconciles by object
	alarms   map[string]time.Time // the earliest requested reconcile time by object
}

// Failed triggered reconciles are tried again after 1s, 2s, 4s, 8s; after that the
// loop's resync is left to retry.
const (
	triggerAttempts   = 5
	triggerFirstRetry = time.Second
)

// NewTrigger prepares triggered reconciles of cfg's objects with f; cfg is the Config
// given to Run.
func NewTrigger(js jetstream.JetStream, cfg Config, f Func) *Trigger {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Trigger{
		js: js, cfg: cfg, f: onlyConcerned(cfg, f),
		q:        events.NewKeyedQueue(max(cfg.Workers, 1)),
		waiting:  map[string]bool{},
		ran:      map[string]released{},
		failures: map[string]int{},
		alarms:   map[string]time.Time{},
	}
}

// Run is Run with the trigger's Config and Func, whose reconciles take the trigger's
// object locks.
func (t *Trigger) Run(ctx context.Context) error {
	return run(ctx, t.js, t.cfg, t.locked(), &t.idle)
}

// locked is the Func Trigger.Run runs: f, holding the object's lock, which is held until
// the slice is published too, so that a triggered reconcile and Run's publish in the order
// they acted. Run read the object before the lock was free, and a triggered reconcile may
// have acted on a newer spec meanwhile, or replaced the service's own slice (which a
// message's reconcile may answer with, Config.Concern), so f never gets an older spec than
// the reconcile before it did: when a triggered reconcile released the object's lock
// after Run began to read it, everything is read again, and a spec of a newer
// generation, which Run's slice could not be labelled with, fails this reconcile with
// [ErrSuperseded] for a retry; the newer record's own message is then already queued
// behind it, and an object the triggered reconcile released needs nothing more. Otherwise nothing but Run's reconciles (one at a time per object) acted on
// the object since it was read, and another replica's slice is refused by the status
// fence: f gets the object as read, with no second round trip.
func (t *Trigger) locked() Func {
	return func(ctx context.Context, o Object) (Result, error) {
		key := events.SpecSubject(o.Ref)
		unlock := t.locks.Lock(key)
		defer unlock()
		if err := leaseHeld(ctx); err != nil {
			return Result{}, err // lost while a requested reconcile held the lock: act no more
		}
		if t.triggeredSince(key, o.readTick) {
			fresh, found, err := readObject(ctx, t.js, t.cfg, o.Ref)
			switch {
			case err != nil:
				return Result{}, err
			case !found || fresh.Meta.UID != o.Meta.UID || fresh.Meta.Generation != o.Meta.Generation:
				return Result{}, fmt.Errorf("%s: %w", o.Ref, ErrSuperseded)
			case fresh.released(t.cfg.Service):
				return Result{Keep: true}, nil // the requested reconcile finished the deletion
			}
			fresh.byMessage = o.byMessage
			o = fresh
			ctx = events.FenceStatus(ctx, o.Ref, t.cfg.Service, o.sliceSeq)
		}
		// The loop calls locked through call, which counts, times and guards the
		// reconcile already; an object read again may have been paused since.
		var res Result
		var err error
		if by := pausedBy(o.Meta); by != "" {
			res, err = paused(ctx, t.cfg, o, by)
		} else {
			res, err = t.f(ctx, o)
		}
		if err != nil || res.Keep {
			return res, err
		}
		if err := publish(ctx, t.js, t.cfg, o, res); err != nil {
			return Result{}, err
		}
		res.published = true
		return res, nil
	}
}

// released is when a requested reconcile released an object's lock.
type released struct {
	tick uint64    // in readTicks
	at   time.Time // to forget it
}

// A requested reconcile's release matters to a reconcile of Run that read the object
// before and waits for its lock, which it takes at once then: an entry this old is not
// needed by anyone, and the entries are pruned of such when they grow many (objects
// deleted since, which no reconcile of Run reads again), at most once per doubling.
const (
	releasedKeep  = time.Minute
	releasedPrune = 1024
)

// release records key's release by a requested reconcile; the caller holds t.mu.
func (t *Trigger) release(key string) {
	now := time.Now()
	t.ran[key] = released{tick: readTicks.Add(1), at: now}
	if len(t.ran) < max(t.pruneAt, releasedPrune) {
		return
	}
	for k, r := range t.ran {
		if now.Sub(r.at) > releasedKeep {
			delete(t.ran, k)
		}
	}
	t.pruneAt = 2 * len(t.ran) // many recent ones: not scanned again at every release
}

// triggeredSince reports whether a requested reconcile of key released its lock after
// the read of tick began (one released before it published what the read saw); the
// caller holds the lock. Run's reads of an object come one after the other, so an entry
// older than this read is not needed again.
func (t *Trigger) triggeredSince(key string, tick uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.ran[key]
	if ok && r.tick < tick {
		delete(t.ran, key)
	}
	return ok && r.tick > tick
}

// ErrSuperseded fails a reconcile whose object was replaced (a newer generation, deleted,
// recreated) while it waited for the object's lock; it is retried like any failure.
var ErrSuperseded = errors.New("superseded while waiting for the object's lock")

// Request queues a reconcile of ref and returns at once. Requests for an object whose
// reconcile has not read it yet collapse into that one; a request made while one runs
// queues one more, since the change it announces may have come after that one's reading.
// Failures are logged: the loop's resync retries them.
func (t *Trigger) Request(ctx context.Context, ref events.Ref) {
	key := events.SpecSubject(ref)
	t.mu.Lock()
	if t.waiting[key] {
		t.mu.Unlock()
		return
	}
	t.waiting[key] = true
	t.mu.Unlock()
	t.jobs.Add(1)
	t.q.Do(key, func() {
		defer t.jobs.Done()
		unlock := t.locks.Lock(key)
		defer func() {
			t.mu.Lock()
			t.release(key) // what it published is there for reads after this
			t.mu.Unlock()
			unlock()
		}()
		t.mu.Lock()
		delete(t.waiting, key) // from here on the object is read: later requests need a new run
		t.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		l := &loop{js: t.js, cfg: t.cfg, f: t.f, idle: &t.idle}
		t.settle(ctx, ref, l.reconcile(ctx, ref))
	})
}

// RequestAt requests a reconcile of ref at the given time, e.g. when a deadline the
// reconcile persisted passes; a time already past requests it now. Only the earliest
// pending time per object is kept: the reconcile it runs asks again for any later one.
// A service persists its deadlines, so that after a restart its first reconciles (a
// RequestAll, a resync) ask again.
func (t *Trigger) RequestAt(ctx context.Context, ref events.Ref, at time.Time) {
	key := events.SpecSubject(ref)
	t.mu.Lock()
	if due, ok := t.alarms[key]; ok && !due.After(at) {
		t.mu.Unlock()
		return
	}
	t.alarms[key] = at
	t.mu.Unlock()
	t.jobs.Add(1)
	go func() {
		defer t.jobs.Done()
		timer := time.NewTimer(time.Until(at))
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		t.mu.Lock()
		current := t.alarms[key].Equal(at)
		if current {
			delete(t.alarms, key)
		}
		t.mu.Unlock()
		if current && ctx.Err() == nil {
			t.Request(ctx, ref)
		}
	}()
}

// settle counts a reconcile's failure and schedules its retry.
func (t *Trigger) settle(ctx context.Context, ref events.Ref, err error) {
	key := events.SpecSubject(ref)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil || ctx.Err() != nil {
		delete(t.failures, key)
		return
	}
	t.failures[key]++
	n := t.failures[key]
	log := t.cfg.Logger.With("service", t.cfg.Service, "object", ref.String(), "err", err, "attempt", n)
	if n >= triggerAttempts || errors.Is(err, events.ErrPermanent) {
		delete(t.failures, key)
		log.Warn("triggered reconcile failed; left to the resync")
		return
	}
	delay := triggerFirstRetry << (n - 1)
	log.Warn("triggered reconcile failed; retrying", "in", delay)
	t.jobs.Add(1)
	go func() {
		defer t.jobs.Done()
		select {
		case <-ctx.Done():
		case <-time.After(delay):
			t.Request(ctx, ref)
		}
	}()
}

// Wait returns once every requested reconcile has finished; after the context given to
// Request ends, they finish at once.
func (t *Trigger) Wait() { t.jobs.Wait() }

// RequestAll requests a reconcile of every object of the kind, e.g. after a watch was
// interrupted and may have missed changes.
func (t *Trigger) RequestAll(ctx context.Context) error {
	subjects, err := events.Subjects(ctx, t.js, events.StreamSpecs, events.SpecFilter(t.cfg.Plural))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil // no stream yet (Run creates it): no objects either
	}
	if err != nil {
		return err
	}
	for _, subj := range subjects {
		if ref, err := events.ParseSpecSubject(subj); err == nil {
			t.Request(ctx, ref)
		}
	}
	return nil
}

// readTicks orders the process's object reads and the triggered reconciles' lock
// releases (Trigger.locked: did one act on an object since it was read?).
var readTicks atomic.Uint64

// readObject reads ref's latest spec and the slices of the service and its inputs as Run
// does; found is false for a missing object or a tombstone.
func readObject(ctx context.Context, js jetstream.JetStream, cfg Config, ref events.Ref) (o Object, found bool, err error) {
	tick := readTicks.Add(1)
	// The slices are read at once, beside the spec: each read is a round trip to JetStream.
	services := append([]string{cfg.Service}, cfg.Inputs...)
	statuses := make([]events.StatusRecord, len(services))
	errs := make([]error, len(services))
	var wg sync.WaitGroup
	for i, svc := range services {
		read := events.LastStatus
		if i == 0 {
			read = events.LastStatusFromLeader // the fence of what the reconcile publishes
		}
		wg.Go(func() { statuses[i], errs[i] = read(ctx, js, ref, svc) })
	}
	rec, err := events.LastSpec(ctx, js, ref)
	wg.Wait()
	if errors.Is(err, events.ErrNotFound) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("read spec of %s: %w", ref, err)
	}
	if rec.Op == events.OpDelete {
		return Object{}, false, nil
	}
	var head struct{ Metadata Meta }
	if err := json.Unmarshal(rec.Body, &head); err != nil {
		return Object{}, false, fmt.Errorf("%w: decode spec of %s: %v", events.ErrPermanent, ref, err)
	}
	o = Object{Ref: ref, Spec: rec, Meta: head.Metadata, Slices: map[string]events.Slice{}, sliceSeq: statuses[0].Seq, readTick: tick}
	o.readDigest = rememberedDigest(js, cfg.Service, o)
	for i, svc := range services {
		if errors.Is(errs[i], events.ErrNotFound) {
			continue
		}
		if errs[i] != nil {
			return Object{}, false, fmt.Errorf("read %s status of %s: %w", svc, ref, errs[i])
		}
		if statuses[i].Slice.UID == o.Meta.UID {
			o.Slices[svc] = statuses[i].Slice
		}
		if o.released(cfg.Service) {
			break // nothing is reconciled: the inputs are not needed
		}
	}
	return o, true, nil
}
