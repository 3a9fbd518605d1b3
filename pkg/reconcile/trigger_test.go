package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

var triggerRef = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "vm.one"}

// probe is a Func that records its calls, measures how many run at once and, while
// blocked is set, holds each call until released.
type probe struct {
	mu                sync.Mutex
	calls, inside, hi int
	generations       []int64
	entered           chan struct{}
	release           chan struct{}
}

func newProbe() *probe {
	return &probe{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (p *probe) f(ctx context.Context, o Object) (Result, error) {
	p.mu.Lock()
	p.calls++
	p.inside++
	p.hi = max(p.hi, p.inside)
	p.generations = append(p.generations, o.Meta.Generation)
	p.mu.Unlock()
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	p.mu.Lock()
	p.inside--
	p.mu.Unlock()
	return Result{Status: map[string]any{"generation": o.Meta.Generation}}, nil
}

func (p *probe) snapshot() (calls, hi int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.hi
}

// A triggered reconcile waits for the loop's reconcile of the same object to finish,
// and requests made while one waits collapse into it.
func TestTriggerSerialisesWithRunAndCoalesces(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx, cancel := context.WithCancel(t.Context())
	p := newProbe()
	cfg := Config{Service: "power", Plural: "virtualmachines", Workers: 4}
	tr := NewTrigger(js, cfg, p.f)
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	seq, err := events.AppendSpec(ctx, js, triggerRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitEntered(t, p) // the loop's reconcile holds the object's lock
	for range 10 {
		tr.Request(ctx, triggerRef)
	}
	waitUntil(t, "the triggered reconcile waits for the lock", func() bool {
		return tr.locks.Users(events.SpecSubject(triggerRef)) == 2
	})
	close(p.release) // from now on calls return at once
	waitUntil(t, "the ten requests reconciled", func() bool { calls, _ := p.snapshot(); return calls >= 2 })

	// A request after a newer spec is queued behind everything requested before it.
	if _, err := events.AppendSpec(ctx, js, triggerRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":2}}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	tr.Request(ctx, triggerRef)
	waitSlice(t, js, triggerRef, `{"generation":2}`)
	waitUntil(t, "the triggered reconcile of generation 2", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, g := range p.generations {
			if g == 2 {
				n++
			}
		}
		return n == 2 // the loop's and the trigger's
	})
	calls, hi := p.snapshot()
	if hi != 1 {
		t.Errorf("%d reconciles of one object ran at once, want 1", hi)
	}
	if calls != 4 {
		t.Errorf("reconciled %d times (generations %v), want 4: the loop twice, the ten requests as one, the last request", calls, p.generations)
	}
}

// RequestAll reconciles every object of the kind.
func TestTriggerRequestAll(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	refs := []events.Ref{triggerRef, {Plural: "virtualmachines", Namespace: "other", Name: "two"}}
	for i, ref := range refs {
		body := `{"metadata":{"uid":"u` + string(rune('1'+i)) + `","generation":3}}`
		if _, err := events.AppendSpec(ctx, js, ref, events.OpPut, []byte(body), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := newProbe()
	close(p.release)
	tr := NewTrigger(js, Config{Service: "power", Plural: "virtualmachines"}, p.f)
	if err := tr.RequestAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		waitSlice(t, js, ref, `{"generation":3}`)
	}
}

func waitEntered(t *testing.T, p *probe) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconcile before the deadline")
	}
}

func waitSlice(t *testing.T, js jetstream.JetStream, ref events.Ref, status string) {
	t.Helper()
	waitUntil(t, "power's slice "+status+" of "+ref.String(), func() bool {
		rec, err := events.LastStatus(t.Context(), js, ref, "power")
		return err == nil && string(rec.Slice.Status) == status
	})
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not before the deadline", what)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// Func hands f the object as Run read it when only Run acted on it since; when a
// triggered reconcile did, it hands f the latest spec (one of the same generation
// replaced it) or refuses (for a retry) when it is of a newer generation or gone.
func TestTriggerFuncRereadsAReplacedSpec(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	cfg := Config{Service: "power", Plural: "virtualmachines", Inputs: []string{"placement"}}
	var seq uint64
	put := func(op, body string) {
		t.Helper()
		var err error
		if seq, err = events.AppendSpec(ctx, js, triggerRef, op, []byte(body), seq, nil); err != nil {
			t.Fatal(err)
		}
	}
	put(events.OpPut, `{"metadata":{"uid":"u1","generation":1}}`)
	stale, found, err := readObject(ctx, js, cfg, triggerRef)
	if err != nil || !found {
		t.Fatalf("readObject = %v, %v", found, err)
	}
	var seen []Object
	f := func(_ context.Context, o Object) (Result, error) { seen = append(seen, o); return Result{}, nil }
	trigger := NewTrigger(js, cfg, f)
	// call runs Func on what Run read, after a triggered reconcile when triggered.
	call := func(triggered bool) error {
		if triggered {
			trigger.Request(ctx, triggerRef)
			trigger.Wait()
		}
		seen = nil
		_, err := trigger.locked()(ctx, stale)
		return err
	}

	put(events.OpPut, `{"metadata":{"uid":"u1","generation":1,"annotations":{"a":"b"}}}`)
	if _, err := events.PublishStatus(ctx, js, triggerRef, events.Slice{Service: "placement", UID: "u1", Generation: 1, Status: []byte(`{"uniqueID":"vm-7"}`)}); err != nil {
		t.Fatal(err)
	}
	// The newer record's own message comes next; nothing acted on it yet.
	if err := call(false); err != nil {
		t.Fatalf("Func: %v", err)
	}
	if len(seen) != 1 || seen[0].Spec.Seq != stale.Spec.Seq {
		t.Errorf("f saw %+v, want the object as read (seq %d)", seen, stale.Spec.Seq)
	}
	if err := call(true); err != nil {
		t.Fatalf("Func: %v", err)
	}
	if len(seen) != 1 || seen[0].Spec.Seq != seq || seen[0].Meta.Annotations["a"] != "b" || string(seen[0].Slices["placement"].Status) != `{"uniqueID":"vm-7"}` {
		t.Errorf("f saw %+v, want the record at seq %d with placement's slice", seen, seq)
	}

	for _, tt := range []struct{ name, op, body string }{
		{"newer generation", events.OpPut, `{"metadata":{"uid":"u1","generation":2}}`},
		{"deleted", events.OpDelete, `{"metadata":{"uid":"u1","generation":2}}`},
	} {
		put(tt.op, tt.body)
		if err := call(true); !errors.Is(err, ErrSuperseded) || len(seen) != 0 {
			t.Errorf("%s: err %v, %d calls; want ErrSuperseded and no call", tt.name, err, len(seen))
		}
	}
}

// A triggered reconcile that fails is tried again.
func TestTriggerRetriesAFailure(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if _, err := events.AppendSpec(ctx, js, triggerRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := 0
	f := func(context.Context, Object) (Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 1 {
			return Result{}, errors.New("vCenter hiccup")
		}
		return Result{Status: map[string]any{"generation": 1}}, nil
	}
	tr := NewTrigger(js, Config{Service: "power", Plural: "virtualmachines"}, f)
	tr.Request(ctx, triggerRef)
	waitSlice(t, js, triggerRef, `{"generation":1}`)
	tr.Wait()
	if calls != 2 {
		t.Errorf("reconciled %d times, want 2", calls)
	}
}

// A requested reconcile's Idle answer is the loop's: the resync of Trigger.Run passes the
// object over, and a later answer that is not idle takes it back.
func TestTriggerRequestedIdleIsTheLoops(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if _, err := events.AppendSpec(ctx, js, triggerRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	var idle atomic.Bool
	tr := NewTrigger(js, Config{Service: "power", Plural: "virtualmachines"}, func(context.Context, Object) (Result, error) {
		return Result{Idle: idle.Load()}, nil
	})
	key := events.ObjectKey(events.SpecSubject(triggerRef))
	for _, want := range []bool{true, false} {
		idle.Store(want)
		tr.Request(ctx, triggerRef)
		tr.Wait()
		if _, got := tr.idle.Load(key); got != want {
			t.Errorf("after a requested reconcile answering Idle %v, the loop's record says %v", want, got)
		}
	}
}

// Before the streams exist there is nothing to reconcile, and that is no error.
func TestTriggerRequestAllWithoutStreams(t *testing.T) {
	js, _ := eventstest.Connect(t, eventstest.Server(t))
	tr := NewTrigger(js, Config{Service: "power", Plural: "virtualmachines"}, newProbe().f)
	if err := tr.RequestAll(t.Context()); err != nil {
		t.Errorf("RequestAll = %v, want nil", err)
	}
}

// RequestAt reconciles at the earliest time asked for, once, and not before it.
func TestTriggerRequestAt(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	if _, err := events.AppendSpec(ctx, js, triggerRef, events.OpPut, []byte(`{"metadata":{"uid":"u1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var at []time.Time
	f := func(context.Context, Object) (Result, error) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
		return Result{}, nil
	}
	tr := NewTrigger(js, Config{Service: "power", Plural: "virtualmachines"}, f)
	start := time.Now()
	soon := start.Add(300 * time.Millisecond)
	tr.RequestAt(ctx, triggerRef, start.Add(time.Hour)) // replaced by the earlier time
	tr.RequestAt(ctx, triggerRef, soon)
	tr.RequestAt(ctx, triggerRef, soon.Add(time.Minute)) // later than the pending one: dropped
	waitUntil(t, "the reconcile at the requested time", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(at) > 0
	})
	mu.Lock()
	first, n := at[0], len(at)
	mu.Unlock()
	if first.Before(soon) {
		t.Errorf("reconciled %v after the request, before the %v asked for", first.Sub(start), soon.Sub(start))
	}
	if n != 1 {
		t.Errorf("%d reconciles, want 1", n)
	}
	tr.mu.Lock()
	pending := len(tr.alarms)
	tr.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d alarms still pending, want none: later requests collapse into the earliest", pending)
	}
}

// The releases Func compares against are forgotten once old, when there are many (a
// deleted object's is never read again), and a recent one is kept.
func TestTriggerForgetsOldReleases(t *testing.T) {
	tr := NewTrigger(nil, Config{Service: "power", Plural: "virtualmachines"}, nil)
	old := time.Now().Add(-2 * releasedKeep)
	for i := range releasedPrune - 2 {
		tr.ran[fmt.Sprintf("old-%d", i)] = released{tick: uint64(i), at: old}
	}
	tr.release("recent")
	tr.release("newest")
	if _, ok := tr.ran["recent"]; len(tr.ran) != 2 || !ok {
		t.Errorf("%d releases kept, want the 2 recent ones", len(tr.ran))
	}
	if !tr.triggeredSince("newest", tr.ran["recent"].tick) || tr.triggeredSince("newest", tr.ran["newest"].tick+1) {
		t.Error("triggeredSince does not compare the release with the read")
	}
}
