// Package reconcile is the loop every vmop service runs (DESIGN §5): the service's
// level-triggered reconcile function is handed the latest state of one object at a time
// (parallel across objects) whenever something about it may have changed: its spec, a
// status slice it depends on, a related object, or a periodic resync. The service's whole
// status slice is published before the triggering message is acknowledged.
package reconcile

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// Object is the latest state of one object, read when its turn comes (never the possibly
// stale payload of the message that woke us).
type Object struct {
	Ref  events.Ref
	Spec events.SpecRecord
	Meta Meta
	// Slices are the newest status slices about this object (matching its uid) of the
	// service itself and of its Inputs, by service name.
	Slices map[string]events.Slice

	byMessage bool   // a spec or input slice message asked for it (see Config.Concern)
	sliceSeq  uint64 // STATUS sequence of the service's own last slice (whatever its uid), 0: none
	readTick  uint64 // when it was read, in readTicks
	// readDigest sums what the service's last reconcile read when that published nothing
	// (concern_memo.go); the stored slice's digest is older then.
	readDigest string
	// answered is the concern's answer to this read, when it was judged unleased already.
	answered *concernAnswer
}

// Meta is the part of metadata every reconciler needs.
type Meta struct {
	UID               string            `json:"uid"`
	Generation        int64             `json:"generation"`
	DeletionTimestamp string            `json:"deletionTimestamp"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
}

// SliceSeq is the STATUS sequence of the service's own last slice as the reconcile read
// it (whatever its uid), 0 for none: what the slices it publishes are fenced by.
func (o Object) SliceSeq() uint64 { return o.sliceSeq }

// Deleting reports that the object is marked for deletion: the service tears down its
// part and returns Released.
func (o Object) Deleting() bool { return o.Meta.DeletionTimestamp != "" }

// released reports that service finished its part of the object's deletion: a deletion
// is not undone, so a later change (another owner's slice, an edit of the deleting
// object) has nothing left for it to do.
func (o Object) released(service string) bool {
	return o.Deleting() && o.Slices[service].Released
}

// Result is the service's whole slice for the object.
type Result struct {
	Status   any  // this service's part of .status; nil for none
	Record   any  // what the service notes for its next reconcile (events.Slice.Record); nil or an empty json.RawMessage for none
	Released bool // the service finished its deletion work
	// Idle: nothing outside NATS concerns the service about the object yet (a VM that
	// placement has not created in vCenter), so whatever would change its answer comes
	// as a message: the resync passes the object over until a reconcile says otherwise.
	Idle bool
	// Keep publishes nothing: the service's previous slice stands, about the generation it
	// names (the service waits for another one's slice, which wakes it; a paused object).
	Keep bool

	answered   bool   // the Func was not called (a concern's or a pause's answer)
	published  bool   // Trigger.locked published it already, under the object's lock
	generation int64  // the generation the slice is about, when not the object's (paused)
	digest     string // what the service read (Config.Concern)
}

// ReleasedKeeping is the Result of a service with nothing to undo for a deleted object:
// its deletion work is done and its last report (prev, the service's own slice) stays.
func ReleasedKeeping(prev events.Slice) Result {
	res := Result{Released: true, Record: prev.Record}
	if len(prev.Status) > 0 {
		res.Status = prev.Status
	}
	return res
}

// Func reconciles one object. It is called again for every change, so it must be
// idempotent; an error is retried with backoff (events.ErrPermanent stops).
type Func func(ctx context.Context, o Object) (Result, error)

// Config names the service and what it watches.
type Config struct {
	Service string
	Plural  string // the kind whose objects are reconciled
	// Durable names the loop's consumers (with "-inputs", "-related" appended); "" means
	// Service. A service running loops for two kinds gives the second its own, so that
	// both publish slices as Service without sharing (and re-filtering) one consumer.
	Durable string
	Workers int // objects reconciled in parallel
	// Inputs are other services whose slices the reconcile reads (Object.Slices); a new
	// slice of one of them triggers a reconcile.
	Inputs []string
	// Related are other kinds (plurals) whose change triggers a reconcile of every object
	// in the same namespace (all objects, for a cluster-scoped related object): e.g. a
	// VirtualMachine waiting for its class.
	Related []string
	// Relate narrows a related change to the objects it concerns, read from the related
	// record (e.g. the claims a VM names), so that a namespace of N objects does not cost N
	// reconciles per change: names are objects of the record's namespace; all reconciles
	// every object as without Relate. nil: every object, always.
	Relate func(ctx context.Context, rec events.SpecRecord) (names []string, all bool, err error)
	// Resync re-reconciles every object this often, for what no event announces; 0: never.
	Resync time.Duration
	// Concern says what of an object the service does not read: a spec or input slice
	// message that brings none of what it reads is answered with the service's previous
	// slice without calling its Func (onlyConcerned), and without taking the object's
	// lease when that slice is the one stored (reconcileObject). nil: every change
	// concerns the service.
	Concern Concern
	// Every service skips a paused object: its Func is not called. ReportsPause names
	// the one service of the kind (so slices do not disagree) whose slice carries
	// VirtualMachineReconcileReady: its Func sets it True, since it runs only unpaused,
	// and while paused the loop republishes its last slice with it False.
	ReportsPause bool
	// WhilePaused is called for a paused object in place of Func, where the one service
	// that reads who paused it outside the object (an admin, in vSphere) looks whether
	// that still holds and keeps the paused label saying so; it acts on nothing else.
	// nil: nothing is looked at.
	WhilePaused func(ctx context.Context, o Object) error
	Logger      *slog.Logger
}

// Run consumes until ctx ends. It ensures the streams first: services may start before
// the gateway does. A service with a Trigger runs Trigger.Run instead.
func Run(ctx context.Context, js jetstream.JetStream, cfg Config, f Func) error {
	return run(ctx, js, cfg, onlyConcerned(cfg, f), new(sync.Map))
}

// run is Run with cfg.Concern applied by f already, recording idle objects in idle.
func run(ctx context.Context, js jetstream.JetStream, cfg Config, f Func, idle *sync.Map) error {
	if err := events.Setup(ctx, js); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return fmt.Errorf("set up streams: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &loop{js: js, cfg: cfg, f: f, q: events.NewKeyedQueue(max(cfg.Workers, 1)), idle: idle}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parts := []func(context.Context) error{l.consumeSpecs, l.sample}
	if len(cfg.Inputs) > 0 {
		parts = append(parts, l.consumeInputs)
	}
	if len(cfg.Related) > 0 {
		parts = append(parts, l.consumeRelated)
	}
	if cfg.Resync > 0 {
		parts = append(parts, l.resync)
	}
	errc := make(chan error, len(parts))
	for _, p := range parts {
		go func() { errc <- p(ctx) }()
	}
	var first error
	for range parts {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	// The parts that enqueue have returned: what they queued ends before the loop does, so
	// that a service stopped (and perhaps started again in the same process) has nothing
	// of its own still acting on an object.
	l.queued.Wait()
	return first
}

type loop struct {
	js  jetstream.JetStream
	cfg Config
	f   Func
	q   *events.KeyedQueue
	// full are the objects (by queue key) whose next reconcile calls the Func whatever
	// the concern says: a resync or a related change that found a reconcile already
	// waiting (enqueue) rides on it, and that one may be a message's.
	full sync.Map
	// queued are the reconciles enqueue queued that have not ended: Consume awaits the
	// messages' own, run awaits these.
	queued sync.WaitGroup
	// idle are the objects (by queue key) whose last Func call answered Result.Idle, and
	// when (time.Time), shared with a Trigger's requested reconciles.
	idle *sync.Map
}

// Suffixes of the loop's consumers beside its SPECS one.
const (
	inputsSuffix  = "-inputs"
	relatedSuffix = "-related"
)

// Consumers names the durable consumers a loop configured by cfg runs: its service's NATS
// identity may use these and no others.
func Consumers(cfg Config) []string {
	l := loop{cfg: cfg}
	names := []string{l.consumer("")}
	if len(cfg.Inputs) > 0 {
		names = append(names, l.consumer(inputsSuffix))
	}
	if len(cfg.Related) > 0 {
		names = append(names, l.consumer(relatedSuffix))
	}
	return names
}

// consumer names one of the loop's consumers: its base name (Durable, or Service) with
// the suffix.
func (l *loop) consumer(suffix string) string {
	return events.Durable(cmp.Or(l.cfg.Durable, l.cfg.Service) + suffix)
}

func (l *loop) consumeSpecs(ctx context.Context) error {
	return events.Consume(ctx, l.js, events.ConsumerConfig{
		Stream: events.StreamSpecs, Durable: l.consumer(""),
		FilterSubjects: []string{events.SpecFilter(l.cfg.Plural)}, Queue: l.q, Coalesce: true,
	}, events.ObjectKey, func(ctx context.Context, msg jetstream.Msg) error {
		ref, err := events.ParseSpecSubject(msg.Subject())
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		return l.reconcileMessage(ctx, ref)
	})
}

func (l *loop) consumeInputs(ctx context.Context) error {
	var filters []string
	for _, svc := range l.cfg.Inputs {
		filters = append(filters, events.ServiceStatusFilter(l.cfg.Plural, svc))
	}
	return events.Consume(ctx, l.js, events.ConsumerConfig{
		Stream: events.StreamStatus, Durable: l.consumer(inputsSuffix),
		FilterSubjects: filters, Queue: l.q, Coalesce: true,
	}, events.ObjectKey, func(ctx context.Context, msg jetstream.Msg) error {
		ref, _, err := events.ParseStatusSubject(msg.Subject())
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		return l.reconcileMessage(ctx, ref)
	})
}

// consumeRelated maps a change of a related object to the objects Config.Relate names, or
// to every object of its namespace without it (or for a change it cannot read).
// The fan-out is queued (not awaited), so the related message is acked at once; the
// queued reconciles log their failures and the resync retries them.
func (l *loop) consumeRelated(ctx context.Context) error {
	var filters []string
	for _, plural := range l.cfg.Related {
		filters = append(filters, events.SpecFilter(plural))
	}
	return events.Consume(ctx, l.js, events.ConsumerConfig{
		Stream: events.StreamSpecs, Durable: l.consumer(relatedSuffix),
		FilterSubjects: filters, Workers: 1,
	}, func(string) string { return "related" }, func(ctx context.Context, msg jetstream.Msg) error {
		rec, err := events.ParseSpecMsg(msg)
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		if l.cfg.Relate != nil {
			names, all, err := l.cfg.Relate(ctx, rec)
			if err != nil {
				return fmt.Errorf("relate %s: %w", rec.Ref, err)
			}
			if !all {
				for _, name := range names {
					l.enqueue(ctx, events.SpecSubject(events.Ref{Plural: l.cfg.Plural, Namespace: rec.Ref.Namespace, Name: name}))
				}
				return nil
			}
		}
		filter := events.SpecFilter(l.cfg.Plural)
		if rec.Ref.Namespace != "" {
			filter = events.NamespaceSpecFilter(l.cfg.Plural, rec.Ref.Namespace)
		}
		return l.enqueueAll(ctx, filter)
	})
}

// enqueueAll queues a reconcile of every object whose spec subject matches filter.
func (l *loop) enqueueAll(ctx context.Context, filter string) error {
	subjects, err := events.Subjects(ctx, l.js, events.StreamSpecs, filter)
	if err != nil {
		return err
	}
	for _, subj := range subjects {
		l.enqueue(ctx, subj)
	}
	return nil
}

// enqueue queues a reconcile of the object of a spec subject, unless one is queued already:
// that one then calls the Func, whatever the concern says (full).
func (l *loop) enqueue(ctx context.Context, subj string) {
	ref, err := events.ParseSpecSubject(subj)
	if err != nil {
		return
	}
	key := events.ObjectKey(subj)
	l.full.Store(key, true)
	l.queued.Add(1)
	if !l.q.DoOnce(key, func() {
		defer l.queued.Done()
		if err := l.reconcile(ctx, ref); err != nil && ctx.Err() == nil {
			l.cfg.Logger.Warn("reconcile", "service", l.cfg.Service, "object", ref.String(), "err", err)
		}
	}) {
		l.queued.Done() // the reconcile already waiting does this one's work
	}
}

// reconcile reads the latest spec and slices, reconciles and publishes the slice. A
// tombstone or a missing object needs nothing: the gateway only removes objects that
// every owner released; nor does one this service released, whatever changed since.
//
// It holds the object's lease throughout (lease.go): no other replica of the service
// acts on the object meanwhile. Every slice it publishes is fenced by the one it read.
func (l *loop) reconcile(ctx context.Context, ref events.Ref) error {
	return l.reconcileObject(ctx, ref, false)
}

// reconcileMessage is reconcile for a message about the object's spec or an input slice:
// a change that may not concern the service (Config.Concern).
func (l *loop) reconcileMessage(ctx context.Context, ref events.Ref) error {
	return l.reconcileObject(ctx, ref, true)
}

func (l *loop) reconcileObject(ctx context.Context, ref events.Ref, byMessage bool) error {
	key := events.ObjectKey(events.SpecSubject(ref))
	_, full := l.full.LoadAndDelete(key)
	if full {
		byMessage = false
	}
	leases := leasesOf(l.js, l.cfg.Service)
	var unleased *unleasedRead
	if freed, ok := leases.freedAt(events.LeaseKey(ref)); ok && byMessage && l.cfg.Concern != nil {
		o, found, err := readObject(ctx, l.js, l.cfg, ref)
		if err != nil || !found || o.released(l.cfg.Service) {
			return err
		}
		o.byMessage = true
		if answered, err := l.answerUnleased(ctx, leases, &o, freed); answered || err != nil {
			return err
		}
		unleased = &unleasedRead{Object: o, freed: freed}
	}
	return leases.hold(ctx, ref, func(ctx context.Context, freedAt uint64) error {
		var o Object
		if unleased != nil && freedAt == unleased.freed {
			// Nobody held the lease since the free value the unleased read came after:
			// what was read is what a read now would find of the service's own doing.
			o = unleased.Object
		} else {
			var found bool
			var err error
			if o, found, err = readObject(ctx, l.js, l.cfg, ref); err != nil || !found || o.released(l.cfg.Service) {
				if err == nil {
					l.noteIdle(key, false) // gone, or nothing left to do
				}
				return err
			}
			o.byMessage = byMessage
		}
		ctx = events.FenceStatus(ctx, ref, l.cfg.Service, o.sliceSeq)
		res, err := call(ctx, l.cfg, l.f, o)
		if err == nil && !res.published && !res.Keep {
			err = publish(ctx, l.js, l.cfg, o, res)
		}
		if !res.answered {
			l.noteIdle(key, err == nil && res.Idle) // a failure is the resync's to retry, too
		}
		return err
	})
}

// noteIdle records whether the object of key is idle (Result.Idle) for the resync, and
// since when.
func (l *loop) noteIdle(key string, idle bool) {
	if idle {
		l.idle.Store(key, time.Now())
	} else {
		l.idle.Delete(key)
	}
}

// unleasedRead is an object read without its lease, after this process wrote the lease's
// free value at revision freed.
type unleasedRead struct {
	Object
	freed uint64
}

// answerUnleased answers a message's reconcile of o, read without the object's lease
// after this process freed it at revision freed, when it needs nothing done: the change
// does not concern the service, its answer (the previous slice) is the stored one, its
// digest aside, and the lease is still the free value at freed, so that no reconcile
// (another replica's, a triggered one) held it while o was read and may yet publish what
// o does not show. Such a reconcile, most of those a busy object's many slices set off,
// then costs one read of the lease instead of its take and its release. answered is false
// when the reconcile is to be done under the lease; the concern's answer is then kept in
// o for it.
func (l *loop) answerUnleased(ctx context.Context, leases *leaseSet, o *Object, freed uint64) (answered bool, err error) {
	if pausedBy(o.Meta) != "" {
		return false, nil
	}
	res, ok, err := unconcernedAnswer(l.cfg, *o)
	if err != nil {
		return false, nil // judged again under the lease, which reports the error
	}
	o.answered = &concernAnswer{res: res, ok: ok}
	if !ok {
		return false, nil
	}
	slice, err := sliceOf(l.cfg, *o, res)
	if err != nil {
		return false, nil
	}
	same, sameButDigest := asRead(*o, slice)
	if !same && !sameButDigest {
		return false, nil
	}
	if free, err := leases.stillFree(ctx, events.LeaseKey(o.Ref), freed); err != nil || !free {
		return false, err
	}
	if sameButDigest {
		rememberDigest(l.js, *o, slice)
	}
	unconcerned.WithLabelValues(l.cfg.Service, o.Ref.Plural).Inc()
	return true, nil
}

// publish records res as the service's slice about o, unless the reconcile lost the
// object's lease meanwhile (another replica may act on it now).
func publish(ctx context.Context, js jetstream.JetStream, cfg Config, o Object, res Result) error {
	if err := leaseHeld(ctx); err != nil {
		return err
	}
	slice, err := sliceOf(cfg, o, res)
	if err != nil {
		return err
	}
	// A slice that says what the stored one said is not published: that costs not even
	// the read PublishStatus would make to find it unchanged. Another replica's slice
	// since the read would have failed the fence: that one stands.
	switch same, sameButDigest := asRead(o, slice); {
	case same:
		return nil
	case sameButDigest:
		rememberDigest(js, o, slice)
		return nil
	}
	if _, err := events.PublishStatus(ctx, js, o.Ref, slice); err != nil {
		return fmt.Errorf("publish status of %s: %w", o.Ref, err)
	}
	forgetDigest(js, cfg.Service, o.Ref)
	return nil
}

// sliceOf is res as the service's slice about o.
func sliceOf(cfg Config, o Object, res Result) (events.Slice, error) {
	slice := events.Slice{Service: cfg.Service, UID: o.Meta.UID, Generation: cmp.Or(res.generation, o.Meta.Generation), Released: res.Released,
		Digest: res.digest}
	var err error
	if res.Status != nil {
		if slice.Status, err = json.Marshal(res.Status); err != nil {
			return slice, fmt.Errorf("%w: encode status of %s: %v", events.ErrPermanent, o.Ref, err)
		}
	}
	switch r := res.Record.(type) {
	case nil:
	case json.RawMessage: // a previous slice's, carried on (none when empty)
		slice.Record = r
	default:
		if slice.Record, err = json.Marshal(r); err != nil {
			return slice, fmt.Errorf("%w: encode record of %s: %v", events.ErrPermanent, o.Ref, err)
		}
	}
	return slice, nil
}
