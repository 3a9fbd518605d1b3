package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concernCfg is a placement-like service reading storage's slice, that reads neither
// spec.volumes nor storage's volumes nor its inputs' generations.
var concernCfg = concerned(ignoreVolumes)

// concerned is a placement-like service reading storage's slice, with concern c.
func concerned(c reconcile.Concern) reconcile.Config {
	return reconcile.Config{Service: "placement", Plural: "virtualmachines", Inputs: []string{"storage"}, Concern: c}
}

func ignoreVolumes(reconcile.Object) reconcile.Ignored {
	return reconcile.Ignored{
		Spec:             []reconcile.Path{{"spec", "volumes"}},
		Inputs:           map[string][]reconcile.Path{"storage": {{"volumes"}}},
		InputGenerations: true,
	}
}

// countingFunc reports what it read (spec.cpu, storage's ready) in a condition about the
// object's generation, and counts its calls.
func countingFunc(calls *atomic.Int32) reconcile.Func {
	return func(_ context.Context, o reconcile.Object) (reconcile.Result, error) {
		calls.Add(1)
		var rec struct{ Spec struct{ CPU int } }
		if err := json.Unmarshal(o.Spec.Body, &rec); err != nil {
			return reconcile.Result{}, err
		}
		var storage struct{ Ready bool }
		if s := o.Slices["storage"]; len(s.Status) > 0 {
			if err := json.Unmarshal(s.Status, &storage); err != nil {
				return reconcile.Result{}, err
			}
		}
		// Kept from the previous slice, as a service keeps them: a transition time read
		// from the clock anew would change the slice whenever a second went by.
		prev, err := reconcile.SliceConditions(o.Slices[concernCfg.Service])
		if err != nil {
			return reconcile.Result{}, err
		}
		conds := reconcile.NewConditionSet(prev, o.Meta.Generation, time.Now())
		conds.Set("Read", metav1.ConditionTrue, "", fmt.Sprintf("cpu %d, storage ready %t", rec.Spec.CPU, storage.Ready))
		return reconcile.Result{Status: map[string]any{"conditions": conds.List()}}, nil
	}
}

// runConcerned runs the loop with a Trigger, as the services do, until the test ends.
func runConcerned(t *testing.T, js jetstream.JetStream, f reconcile.Func) *reconcile.Trigger {
	tr := reconcile.NewTrigger(js, concernCfg, f)
	runUntilCleanup(t, t.Context(), tr.Run)
	return tr
}

// storageFed is a service run as runConcerned runs it, with a countingFunc, over vmRef's
// first generation, storage having said {"ready":false}.
type storageFed struct {
	t     *testing.T
	js    jetstream.JetStream
	calls atomic.Int32
	first events.Slice // the service's slice about generation 1
}

// newStorageFed returns once the service's first slice is there.
func newStorageFed(t *testing.T) *storageFed {
	t.Helper()
	js, _ := eventstest.JetStream(t)
	f := &storageFed{t: t, js: js}
	runConcerned(t, js, countingFunc(&f.calls))
	f.publishConsumed(`{"ready":false}`)
	if _, err := events.AppendSpec(t.Context(), js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil); err != nil {
		t.Fatal(err)
	}
	f.first = waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	return f
}

// publish sends storage's next slice.
func (f *storageFed) publish(status string) {
	f.t.Helper()
	slice := events.Slice{Service: "storage", UID: "u1", Generation: 1, Status: json.RawMessage(status)}
	if _, err := events.PublishStatus(f.t.Context(), f.js, vmRef, slice); err != nil {
		f.t.Fatal(err)
	}
}

// publishConsumed sends storage's next slice and waits until the service reconciled it.
func (f *storageFed) publishConsumed(status string) {
	f.t.Helper()
	f.publish(status)
	f.consumed()
}

// consumed waits until the service reconciled every slice of its inputs.
func (f *storageFed) consumed() {
	f.t.Helper()
	waitConsumed(f.t, f.js, events.StreamStatus, events.Durable(concernCfg.Service+"-inputs"))
}

func vmRecord(generation, cpu int, volumes string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"uid":"u1","generation":%d},"spec":{"cpu":%d,"volumes":[%s]}}`, generation, cpu, volumes)
}

// sliceMessage is the message of the service's slice's Read condition, with its
// observedGeneration.
func sliceMessage(t *testing.T, s events.Slice) (string, int64) {
	t.Helper()
	conds, err := reconcile.SliceConditions(s)
	if err != nil {
		t.Fatal(err)
	}
	c := reconcile.FindCondition(conds, "Read")
	if c == nil {
		return "", 0
	}
	return c.Message, c.ObservedGeneration
}

// A change of a path the service ignores advances its slice's generation (and its
// conditions' observedGeneration) without calling its Func; a change it reads, in the
// spec or an input, calls it; so does a triggered reconcile.
func TestConcernSkipsWhatTheServiceDoesNotRead(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	tr := runConcerned(t, js, countingFunc(&calls))

	publishStorage := func(generation int64, status string) {
		t.Helper()
		slice := events.Slice{Service: "storage", UID: "u1", Generation: generation, Status: json.RawMessage(status)}
		if _, err := events.PublishStatus(ctx, js, vmRef, slice); err != nil {
			t.Fatal(err)
		}
	}
	publishStorage(1, `{"volumes":[]}`)
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	if first.Digest == "" || calls.Load() != 1 {
		t.Fatalf("after create: digest %q, %d calls; want a digest and 1 call", first.Digest, calls.Load())
	}

	if seq, err = events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(2, 1, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	second := waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	if msg, gen := sliceMessage(t, second); calls.Load() != 1 || gen != 2 || msg != "cpu 1, storage ready false" {
		t.Errorf("after a volume change: %d calls, condition %q about generation %d; want 1 call, the same condition about 2",
			calls.Load(), msg, gen)
	}
	if want := strings.Replace(string(first.Status), `"observedGeneration":1`, `"observedGeneration":2`, 1); string(second.Status) != want {
		t.Errorf("status after an ignored change:\n%s\nwant the previous one, byte for byte, about generation 2:\n%s", second.Status, want)
	}
	if second.Digest != first.Digest {
		t.Errorf("digest %q after an ignored change, want %q", second.Digest, first.Digest)
	}

	if _, err = events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(3, 2, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 2, storage ready false" })
	if calls.Load() != 2 {
		t.Errorf("%d calls after a cpu change, want 2", calls.Load())
	}

	// Storage reports volumes (ignored) at a new generation, then readiness (read): only
	// the latter calls the Func.
	for _, status := range []string{`{"volumes":[{"name":"a"}]}`, `{"volumes":[{"name":"a"}],"ready":true}`} {
		publishStorage(3, status)
	}
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 2, storage ready true" })
	if calls.Load() != 3 {
		t.Errorf("%d calls after storage's two slices, want 3 (its volumes do not concern the service)", calls.Load())
	}

	tr.Request(ctx, vmRef)
	tr.Wait()
	if calls.Load() != 4 {
		t.Errorf("%d calls after a triggered reconcile, want 4: it always reconciles", calls.Load())
	}
}

// The digest is kept in the slice: a service restarted after its last reconcile still
// skips a change that does not concern it.
func TestConcernSurvivesARestart(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var before atomic.Int32
	stop := make(chan struct{})
	go func() {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { <-stop; cancel() }()
		_ = reconcile.Run(ctx, js, concernCfg, countingFunc(&before))
		stop <- struct{}{}
	}()
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	stop <- struct{}{}
	<-stop

	var after atomic.Int32
	runConcerned(t, js, countingFunc(&after))
	if _, err = events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(2, 1, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	if before.Load() != 1 || after.Load() != 0 {
		t.Errorf("calls before and after the restart: %d, %d; want 1, 0", before.Load(), after.Load())
	}
}

// A service whose last report asks for another attempt (Unsettled) is concerned by every
// new generation, even one changing only what it ignores.
func TestConcernRetriesWhenUnsettled(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	unsettled := func(o reconcile.Object) reconcile.Ignored {
		ign := ignoreVolumes(o)
		ign.Unsettled = true
		return ign
	}
	runLoop(t, ctx, js, concerned(unsettled), countingFunc(&calls))
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 1 })
	if _, err = events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(2, 1, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2: an unsettled service retries at every generation", calls.Load())
	}
}

// An input named in OnlyOfInputs concerns the service by those paths only: a slice of it
// changing anything else does not call the Func.
func TestConcernReadsOnlyTheNamedPartsOfAnInput(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	onlyReady := func(reconcile.Object) reconcile.Ignored {
		return reconcile.Ignored{OnlyOfInputs: map[string][]reconcile.Path{"storage": {{"ready"}}}, InputGenerations: true}
	}
	runLoop(t, ctx, js, concerned(onlyReady), countingFunc(&calls))
	publishStorage := func(status string) {
		t.Helper()
		slice := events.Slice{Service: "storage", UID: "u1", Generation: 1, Status: json.RawMessage(status)}
		if _, err := events.PublishStatus(ctx, js, vmRef, slice); err != nil {
			t.Fatal(err)
		}
	}
	publishStorage(`{"volumes":[],"ready":false}`)
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 1, storage ready false" })
	for _, status := range []string{`{"volumes":[{"name":"a"}],"ready":false}`, `{"volumes":[{"name":"a"}],"ready":false,"phase":"x"}`,
		`{"volumes":[{"name":"a"}],"ready":true,"phase":"x"}`} {
		publishStorage(status)
		waitConsumed(t, js, events.StreamStatus, events.Durable(concernCfg.Service+"-inputs")) // one reconcile each
	}
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 1, storage ready true" })
	if calls.Load() != 2 {
		t.Errorf("%d calls after storage's three slices, want 2: only its readiness concerns the service", calls.Load())
	}
}

// An input named in OnlyConditionsOf concerns the service by those conditions only: a
// slice of it whose other conditions change does not call the Func.
func TestConcernReadsOnlyTheNamedConditionsOfAnInput(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	var calls atomic.Int32
	onlyReady := func(reconcile.Object) reconcile.Ignored {
		return reconcile.Ignored{OnlyConditionsOf: map[string][]string{"storage": {"Ready"}}, InputGenerations: true}
	}
	runLoop(t, ctx, js, concerned(onlyReady), countingFunc(&calls))
	publishStorage := func(conditions string) {
		t.Helper()
		slice := events.Slice{Service: "storage", UID: "u1", Generation: 1, Status: json.RawMessage(`{"ready":false,"conditions":[` + conditions + `]}`)}
		if _, err := events.PublishStatus(ctx, js, vmRef, slice); err != nil {
			t.Fatal(err)
		}
	}
	publishStorage(`{"type":"Ready","status":"False"}`)
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 1, storage ready false" })
	for _, conds := range []string{`{"type":"Ready","status":"False"},{"type":"Other","status":"False"}`,
		`{"type":"Other","status":"True"},{"type":"Ready","status":"False"}`} {
		publishStorage(conds)
		waitConsumed(t, js, events.StreamStatus, events.Durable(concernCfg.Service+"-inputs")) // one reconcile each
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls after two slices changing only storage's Other condition, want still 1", calls.Load())
	}
	// Its Ready condition changing calls the Func, awaited with a deadline: CI run 68 once
	// counted 1 call right after the three slices were consumed (not reproduced since).
	publishStorage(`{"type":"Ready","status":"True"},{"type":"Other","status":"True"}`)
	waitCount(t, &calls, 2, "the call for storage's Ready condition")
	waitConsumed(t, js, events.StreamStatus, events.Durable(concernCfg.Service+"-inputs"))
	if calls.Load() != 2 {
		t.Errorf("%d calls after storage's Ready condition changed, want 2", calls.Load())
	}
}

// An input change the service reads but that leaves its slice as it was (but for the
// digest) publishes nothing; the same change again does not call the Func: its digest is
// remembered until the service's slice changes.
func TestConcernRemembersADigestItDidNotPublish(t *testing.T) {
	f := newStorageFed(t)
	js, calls, first, publishStorage := f.js, &f.calls, f.first, f.publishConsumed
	ctx := t.Context()
	seqOf := func() uint64 {
		rec, err := events.LastStatus(ctx, js, vmRef, concernCfg.Service)
		if err != nil {
			t.Fatal(err)
		}
		return rec.Seq
	}
	published := seqOf()

	// The service reads storage's phase, which its result does not show: one call, no slice.
	publishStorage(`{"ready":false,"phase":"x"}`)
	if calls.Load() != 2 {
		t.Fatalf("%d calls after a change the service reads, want 2", calls.Load())
	}
	if seq := seqOf(); seq != published {
		t.Errorf("the service's slice went from sequence %d to %d, though only its digest changed", published, seq)
	}
	// Storage says it again beside what the service ignores: nothing it read changed.
	publishStorage(`{"ready":false,"phase":"x","volumes":[{"name":"a"}]}`)
	if calls.Load() != 2 {
		t.Errorf("%d calls after a change of what the service ignores, want still 2: the unpublished digest counts", calls.Load())
	}
	// What the result shows changes: the slice is published with the new digest.
	publishStorage(`{"ready":true,"phase":"x","volumes":[{"name":"a"}]}`)
	last := waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 1, storage ready true" })
	if calls.Load() != 3 || last.Digest == first.Digest {
		t.Errorf("%d calls, digest %q (first %q) after storage became ready; want 3 calls and a new digest", calls.Load(), last.Digest, first.Digest)
	}
}

// waitConsumed waits until a consumer has every message of its stream acknowledged.
func waitConsumed(t *testing.T, js jetstream.JetStream, stream, durable string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := js.Consumer(t.Context(), stream, durable)
		if err == nil {
			info, err := c.Info(t.Context())
			if err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer %s of %s did not catch up: %v", durable, stream, err)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// A message whose change does not concern the service, and whose answer is the slice
// stored, is answered without the object's lease: the lease's key is not written. One
// that concerns it is reconciled under the lease.
func TestConcernUnconcernedMessageTakesNoLease(t *testing.T) {
	f := newStorageFed(t)
	js, calls, publishStorage := f.js, &f.calls, f.publishConsumed
	ctx := t.Context()
	leases, err := events.Leases(ctx, js, concernCfg.Service)
	if err != nil {
		t.Fatal(err)
	}
	freed := freeLeaseRevision(t, leases, events.LeaseKey(vmRef))

	publishStorage(`{"ready":false,"volumes":[{"name":"a"}]}`)
	if rev := freeLeaseRevision(t, leases, events.LeaseKey(vmRef)); rev != freed || calls.Load() != 1 {
		t.Errorf("after a change the service ignores: lease revision %d (was %d), %d calls; want the lease untouched and 1 call", rev, freed, calls.Load())
	}
	publishStorage(`{"ready":true,"volumes":[{"name":"a"}]}`)
	waitSlice(t, js, func(s events.Slice) bool { msg, _ := sliceMessage(t, s); return msg == "cpu 1, storage ready true" })
	if rev := freeLeaseRevision(t, leases, events.LeaseKey(vmRef)); rev <= freed || calls.Load() != 2 {
		t.Errorf("after a change the service reads: lease revision %d (was %d), %d calls; want the lease taken and 2 calls", rev, freed, calls.Load())
	}
}

// freeLeaseRevision waits until key's lease is free (its holder wrote it empty) and
// returns the revision of that free value.
func freeLeaseRevision(t *testing.T, leases jetstream.KeyValue, key string) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, err := leases.Get(t.Context(), key)
		if err == nil && len(e.Value()) == 0 {
			return e.Revision()
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease %s not free: %v", key, err)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// A message that would be answered without the lease is reconciled under it when the lease
// was taken meanwhile (another replica's reconcile may be about to publish what the
// unleased read did not see): it waits for the holder, then takes the lease itself.
func TestConcernUnleasedAnswerWaitsForAHolder(t *testing.T) {
	f := newStorageFed(t)
	js, calls := f.js, &f.calls
	ctx := t.Context()
	leases, err := events.Leases(ctx, js, concernCfg.Service)
	if err != nil {
		t.Fatal(err)
	}
	key := events.LeaseKey(vmRef)
	freed := freeLeaseRevision(t, leases, key)

	// Another replica holds the lease while a change the service ignores comes.
	held, err := leases.Update(ctx, key, []byte("another-replica"), freed)
	if err != nil {
		t.Fatal(err)
	}
	f.publish(`{"ready":false,"volumes":[{"name":"a"}]}`)
	othersFree, err := leases.Update(ctx, key, nil, held)
	if err != nil {
		t.Fatal(err)
	}
	f.consumed()
	if rev := freeLeaseRevision(t, leases, key); rev <= othersFree || calls.Load() != 1 {
		t.Errorf("lease at revision %d after the other replica freed it at %d, %d calls; want it taken and freed again, 1 call", rev, othersFree, calls.Load())
	}
}

// A related object's change that finds a message's reconcile of the VM already queued
// rides on it, and that reconcile calls the Func though the message's own change does
// not concern the service: the related change is not lost.
func TestConcernRelatedChangeRidingOnAMessageReachesTheFunc(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	cfg := concernCfg
	cfg.Related = []string{"virtualmachineclasses"}
	var calls atomic.Int32
	running, release := make(chan struct{}), make(chan struct{})
	counting := countingFunc(&calls)
	runLoop(t, ctx, js, cfg, func(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
		if calls.Load() == 0 {
			close(running)
			<-release // the first reconcile runs while the next ones queue behind it
		}
		return counting(ctx, o)
	})
	seq, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(1, 1, ""), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-running
	// Queued behind it: a change the service ignores, then a related change.
	if _, err := events.AppendSpec(ctx, js, vmRef, events.OpPut, vmRecord(2, 1, `{"name":"a"}`), seq, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(ctx, js, events.Ref{Plural: "virtualmachineclasses", Name: "small"}, events.OpPut, []byte(`{"metadata":{"uid":"c1","generation":1}}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	waitConsumed(t, js, events.StreamSpecs, events.Durable(cfg.Service+"-related"))
	close(release)
	waitSlice(t, js, func(s events.Slice) bool { return s.Generation == 2 })
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2: the related change reaches the Func", calls.Load())
	}
}
