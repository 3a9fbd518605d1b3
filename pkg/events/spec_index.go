package events

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// specIndexRecheck is how often a SpecIndex looks where the stream ends: a stream deleted
// and made again numbers its records from 1, and an index that read further would wait
// for them forever. One that finds the stream ending before what it read starts over.
const specIndexRecheck = 10 * time.Second

// SpecIndex keeps in one process what project makes of the newest record of each object
// of a kind: a decision over a whole namespace (placement's affinity, storage's claim
// users) reads it instead of every record of the namespace, which made each decision cost
// as much as the namespace is large, and creating n VMs cost n². Each read first brings
// the index up to the stream with a batched direct get of the records appended since the
// last (one request that finds none when nothing changed), so it sees what a read of the
// stream at that time sees. It reads the stream from its start once and from then on only
// forward, so a replica that answered from behind is caught up with at the next read,
// never skipped.
type SpecIndex[T any] struct {
	js      jetstream.JetStream
	plural  string
	project func(SpecRecord) (T, bool) // what is kept of a live record; false: nothing

	mu       sync.Mutex
	applied  uint64    // the SPECS sequence read up to
	caughtUp time.Time // when the last read up to the stream's end began
	checked  time.Time // when the stream's end was last compared with applied
	recheck  time.Duration
	objects  map[string]map[string]Indexed[T]
}

// Indexed is what a SpecIndex keeps of one object.
type Indexed[T any] struct {
	Ref   Ref
	Seq   uint64 // the SPECS sequence of the record it was made of
	Value T
}

// NewSpecIndex is an empty index of plural's objects; project says what it keeps of a
// record that is not a tombstone (false for nothing, e.g. an unreadable record).
func NewSpecIndex[T any](js jetstream.JetStream, plural string, project func(SpecRecord) (T, bool)) *SpecIndex[T] {
	return &SpecIndex[T]{js: js, plural: plural, project: project, recheck: specIndexRecheck,
		objects: map[string]map[string]Indexed[T]{}}
}

// In returns what the index keeps of the namespace's objects, ordered by name, as of the
// stream's state when it was called.
func (x *SpecIndex[T]) In(ctx context.Context, namespace string) ([]Indexed[T], error) {
	return x.Where(ctx, namespace, nil)
}

// Where is In with only the objects keep accepts (every one with nil): a decision about a
// few objects of a large namespace copies and sorts only those.
func (x *SpecIndex[T]) Where(ctx context.Context, namespace string, keep func(Indexed[T]) bool) ([]Indexed[T], error) {
	asked := time.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.catchUp(ctx, asked); err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", x.plural, namespace, err)
	}
	var out []Indexed[T]
	for _, o := range x.objects[namespace] {
		if keep == nil || keep(o) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Indexed[T]) int { return cmp.Compare(a.Ref.Name, b.Ref.Name) })
	return out, nil
}

// Everywhere returns what the index keeps of the objects of every namespace, in no order,
// as of the stream's state when it was called: a decision over what VMs of every
// namespace share (a host's local datastore).
func (x *SpecIndex[T]) Everywhere(ctx context.Context) ([]Indexed[T], error) {
	asked := time.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.catchUp(ctx, asked); err != nil {
		return nil, fmt.Errorf("read %s: %w", x.plural, err)
	}
	var out []Indexed[T]
	for _, ns := range x.objects {
		for _, o := range ns {
			out = append(out, o)
		}
	}
	return out, nil
}

// catchUp reads the records appended since the index last did, unless a read that began
// after asked already did: callers waiting on one another share the reads.
func (x *SpecIndex[T]) catchUp(ctx context.Context, asked time.Time) error {
	if x.caughtUp.After(asked) {
		return nil
	}
	began := time.Now()
	if began.Sub(x.checked) >= x.recheck {
		head, err := Head(ctx, x.js, StreamSpecs)
		if err != nil {
			return err
		}
		if head < x.applied {
			x.applied, x.objects = 0, map[string]map[string]Indexed[T]{}
		}
		x.checked = began
	}
	err := readForward(ctx, x.js, StreamSpecs, SpecFilter(x.plural), x.applied+1, func(raw *jetstream.RawStreamMsg) {
		x.applied = raw.Sequence
		if rec, err := ParseRawSpecMsg(raw); err == nil {
			x.apply(rec)
		}
	})
	if err == nil {
		x.caughtUp = began
	}
	return err
}

// apply makes rec the newest record of its object.
func (x *SpecIndex[T]) apply(rec SpecRecord) {
	ns := x.objects[rec.Ref.Namespace]
	var v T
	kept := rec.Op == OpPut
	if kept {
		v, kept = x.project(rec)
	}
	if !kept {
		delete(ns, rec.Ref.Name)
		if len(ns) == 0 {
			delete(x.objects, rec.Ref.Namespace)
		}
		return
	}
	if ns == nil {
		ns = map[string]Indexed[T]{}
		x.objects[rec.Ref.Namespace] = ns
	}
	ns[rec.Ref.Name] = Indexed[T]{Ref: rec.Ref, Seq: rec.Seq, Value: v}
}
