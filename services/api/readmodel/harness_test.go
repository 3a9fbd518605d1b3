package readmodel

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// deadline bounds every wait in these tests; a healthy run needs milliseconds.
const deadline = 10 * time.Second

const vms = "virtualmachines"

// harness is a read model folding a real embedded JetStream.
type harness struct {
	t     *testing.T
	js    jetstream.JetStream
	path  string
	opts  []Option
	store *Store
	stop  func() // stops the running Fold and waits for it
	last  map[events.Ref]uint64
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	js, _ := eventstest.JetStream(t)
	h := &harness{t: t, js: js, path: filepath.Join(t.TempDir(), "readmodel.db"), opts: opts, last: map[events.Ref]uint64{}}
	h.open()
	h.fold()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	s, err := Open(h.path, h.opts...)
	if err != nil {
		h.t.Fatalf("Open(%s) error = %v", h.path, err)
	}
	h.store = s
}

// fold starts Fold in the background.
func (h *harness) fold() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	store, js := h.store, h.js
	go func() { done <- store.Fold(ctx, js) }()
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Fold() error = %v", err)
		}
	}
}

// close stops the fold and closes the store (idempotent).
func (h *harness) close() {
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
	if h.store != nil {
		if err := h.store.Close(); err != nil {
			h.t.Errorf("Close() error = %v", err)
		}
		h.store = nil
	}
}

// reopen simulates a gateway restart on the same database file.
func (h *harness) reopen() {
	h.close()
	h.open()
	h.fold()
}

// obj is a test object; body renders it as a SPECS record.
type obj struct {
	ns, name, uid string
	labels        map[string]string
	spec          map[string]any
	deleting      bool
	finalizers    []string
}

func (o obj) ref() events.Ref { return events.Ref{Plural: vms, Namespace: o.ns, Name: o.name} }

func (o obj) body() []byte {
	meta := map[string]any{"name": o.name, "namespace": o.ns, "uid": o.uid, "generation": 1}
	if o.labels != nil {
		meta["labels"] = o.labels
	}
	if o.deleting {
		meta["deletionTimestamp"] = "2026-01-02T03:04:05Z"
	}
	if o.finalizers != nil {
		meta["finalizers"] = o.finalizers
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5",
		"kind":       "VirtualMachine",
		"metadata":   meta,
		"spec":       o.spec,
	})
	if err != nil {
		panic(err)
	}
	return b
}

// put appends o to SPECS (CAS on the last record the harness wrote) and returns its seq.
func (h *harness) put(o obj) uint64 { return h.append(o, events.OpPut) }

// remove appends a tombstone for o.
func (h *harness) remove(o obj) uint64 { return h.append(o, events.OpDelete) }

func (h *harness) append(o obj, op string) uint64 {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	seq, err := events.AppendSpec(ctx, h.js, o.ref(), op, o.body(), h.last[o.ref()], nil)
	if err != nil {
		h.t.Fatalf("AppendSpec(%s, %s) error = %v", o.ref(), op, err)
	}
	h.last[o.ref()] = seq
	return seq
}

// status publishes a service's slice about o and returns its STATUS seq.
func (h *harness) status(o obj, service, uid string, released bool, status string) uint64 {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	seq, err := events.PublishStatus(ctx, h.js, o.ref(), events.Slice{
		Service: service, UID: uid, Generation: 1, Released: released, Status: json.RawMessage(status),
	})
	if err != nil {
		h.t.Fatalf("PublishStatus(%s, %s) error = %v", o.ref(), service, err)
	}
	return seq
}

func (h *harness) waitSpec(seq uint64) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := h.store.WaitSpec(ctx, seq); err != nil {
		h.t.Fatalf("WaitSpec(%d) error = %v", seq, err)
	}
}

func (h *harness) waitStatus(seq uint64) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := h.store.WaitStatus(ctx, seq); err != nil {
		h.t.Fatalf("WaitStatus(%d) error = %v", seq, err)
	}
}

func (h *harness) waitCaughtUp() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := h.store.WaitCaughtUp(ctx); err != nil {
		h.t.Fatalf("WaitCaughtUp() error = %v", err)
	}
}

func (h *harness) get(o obj) Object {
	h.t.Helper()
	got, err := h.store.Get(vms, o.ns, o.name)
	if err != nil {
		h.t.Fatalf("Get(%s) error = %v", o.ref(), err)
	}
	return got
}

func (h *harness) notFound(o obj) {
	h.t.Helper()
	if got, err := h.store.Get(vms, o.ns, o.name); !errors.Is(err, ErrNotFound) {
		h.t.Fatalf("Get(%s) = %s, %v; want ErrNotFound", o.ref(), got.JSON, err)
	}
}

// watch starts a watch that ends with the test.
func (h *harness) watch(o WatchOptions) <-chan Change {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	if o.Plural == "" {
		o.Plural = vms
	}
	ch, err := h.store.Watch(ctx, o)
	if err != nil {
		h.t.Fatalf("Watch(%+v) error = %v", o, err)
	}
	return ch
}

// event is a Change reduced to what tests compare.
// event is a watch event as tests compare it: RV is the object's version (ObjectVersion),
// which a get of the object shows too.
type event struct{ Type, Name, RV string }

func eventOf(t *testing.T, c Change) event {
	t.Helper()
	if c.Type == Bookmark {
		return event{Type: c.Type, RV: c.RV}
	}
	var o struct {
		Metadata struct{ Name, ResourceVersion string }
	}
	if err := json.Unmarshal(c.Object, &o); err != nil {
		t.Fatalf("watch object %s: %v", c.Object, err)
	}
	if o.Metadata.ResourceVersion != c.RV {
		t.Errorf("watch event RV %s, object says %s", c.RV, o.Metadata.ResourceVersion)
	}
	return event{Type: c.Type, Name: o.Metadata.Name, RV: ObjectVersion(c.RV)}
}

// collect reads n events from ch, failing the test if they do not come in time.
func collect(t *testing.T, ch <-chan Change, n int) []event {
	t.Helper()
	timeout := time.After(deadline)
	var got []event
	for len(got) < n {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("watch closed after %d events %v, want %d", len(got), got, n)
			}
			got = append(got, eventOf(t, c))
		case <-timeout:
			t.Fatalf("got %d watch events %v within %v, want %d", len(got), got, deadline, n)
		}
	}
	return got
}

// decode parses an object's JSON for assertions.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("object JSON %s: %v", b, err)
	}
	return m
}
