package events_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// indexedV is the test's projection: a record's "v", refused when it has none.
func indexedV(rec events.SpecRecord) (int, bool) {
	var body struct{ V *int }
	if json.Unmarshal(rec.Body, &body) != nil || body.V == nil {
		return 0, false
	}
	return *body.V, true
}

// An index holds, for each object of its kind and namespace, what its projection made of
// the newest record: written before its first read (more than one batch), after it, and
// rewritten, deleted or unreadable since; nothing of another kind or namespace.
func TestSpecIndexKeepsTheNewestRecordOfEachObject(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	seqs := map[events.Ref]uint64{}
	put := func(ref events.Ref, op, body string) {
		t.Helper()
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		seq, err := events.AppendSpec(ctx, js, ref, op, b, seqs[ref], nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs[ref] = seq
	}
	vm := func(ns, name string) events.Ref {
		return events.Ref{Plural: "virtualmachines", Namespace: ns, Name: name}
	}
	const before = 600 // more than one batched get holds
	for i := range before {
		put(vm("ns", fmt.Sprintf("vm-%04d", i)), events.OpPut, fmt.Sprintf(`{"v":%d}`, i))
	}
	put(vm("other", "vm-0000"), events.OpPut, `{"v":-1}`)
	put(events.Ref{Plural: "persistentvolumeclaims", Namespace: "ns", Name: "vm-0001"}, events.OpPut, `{"v":-2}`)

	index := events.NewSpecIndex(js, "virtualmachines", indexedV)
	want := map[string]int{}
	for i := range before {
		want[fmt.Sprintf("vm-%04d", i)] = i
	}
	check := func(when string) {
		t.Helper()
		got, err := index.In(ctx, "ns")
		if err != nil {
			t.Fatalf("%s: In = %v", when, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d objects, want %d", when, len(got), len(want))
		}
		for i, o := range got {
			if i > 0 && got[i-1].Ref.Name >= o.Ref.Name {
				t.Fatalf("%s: %s after %s: not ordered by name", when, o.Ref.Name, got[i-1].Ref.Name)
			}
			if v, ok := want[o.Ref.Name]; !ok || o.Value != v || o.Seq != seqs[o.Ref] || o.Ref != vm("ns", o.Ref.Name) {
				t.Fatalf("%s: %s = %d at seq %d, want %d (present %v) at seq %d", when, o.Ref, o.Value, o.Seq, v, ok, seqs[o.Ref])
			}
		}
	}
	check("first read")

	put(vm("ns", "vm-0003"), events.OpPut, `{"v":1003}`)
	want["vm-0003"] = 1003
	put(vm("ns", "vm-0004"), events.OpDelete, "")
	delete(want, "vm-0004")
	put(vm("ns", "vm-0005"), events.OpPut, `{"unreadable":true}`)
	delete(want, "vm-0005")
	put(vm("ns", "new"), events.OpPut, `{"v":7}`)
	want["new"] = 7
	check("after changes")

	put(vm("ns", "vm-0004"), events.OpPut, `{"v":4}`) // a new incarnation
	want["vm-0004"] = 4
	put(vm("ns", "vm-0005"), events.OpPut, `{"v":5}`)
	want["vm-0005"] = 5
	check("after the deleted and unreadable came back")

	if got, err := index.In(ctx, "other"); err != nil || len(got) != 1 || got[0].Value != -1 {
		t.Errorf("namespace other: %+v, %v; want its one VM", got, err)
	}
	if got, err := index.In(ctx, "none"); err != nil || len(got) != 0 {
		t.Errorf("a namespace without VMs: %+v, %v", got, err)
	}
	odd, err := index.Where(ctx, "ns", func(o events.Indexed[int]) bool { return o.Value%2 == 1 && o.Value < 10 })
	if names := refNames(odd); err != nil || !slices.Equal(names, []string{"new", "vm-0001", "vm-0005", "vm-0007", "vm-0009"}) {
		t.Errorf("Where odd values under 10 = %v, %v; want new (7) and vm-0001, 5, 7, 9 (vm-0003 is 1003 now), in name order", names, err)
	}

	put(vm("third", "late"), events.OpPut, `{"v":-3}`) // appended after every read so far
	everywhere, err := index.Everywhere(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(everywhere) != len(want)+2 {
		t.Errorf("everywhere: %d objects, want %d (ns's, other's and third's)", len(everywhere), len(want)+2)
	}
	for _, o := range everywhere {
		w, ok := want[o.Ref.Name]
		switch o.Ref.Namespace {
		case "other":
			w, ok = -1, o.Ref.Name == "vm-0000"
		case "third":
			w, ok = -3, o.Ref.Name == "late"
		}
		if !ok || o.Value != w {
			t.Errorf("everywhere: %s = %d, want %d (present %v)", o.Ref, o.Value, w, ok)
		}
	}
}

// A SPECS stream deleted and made again numbers its records from 1: the index, which had
// read further, starts over once it sees the stream end before what it read, and holds
// the new stream's objects, not the old one's.
func TestSpecIndexStartsOverWithANewStream(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	vm := func(name string) events.Ref {
		return events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: name}
	}
	for i := range 5 {
		if _, err := events.AppendSpec(ctx, js, vm(fmt.Sprintf("old-%d", i)), events.OpPut, []byte(`{"v":1}`), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	index := events.NewSpecIndex(js, "virtualmachines", indexedV)
	if got, err := index.In(ctx, "ns"); err != nil || len(got) != 5 {
		t.Fatalf("before: %d objects, %v; want 5", len(got), err)
	}

	if err := js.DeleteStream(ctx, events.StreamSpecs); err != nil {
		t.Fatal(err)
	}
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(ctx, js, vm("new"), events.OpPut, []byte(`{"v":2}`), 0, nil); err != nil {
		t.Fatal(err)
	}
	index.SetRecheck(0)
	got, err := index.In(ctx, "ns")
	if err != nil || len(got) != 1 || got[0].Ref.Name != "new" || got[0].Value != 2 {
		t.Fatalf("after the stream was made again: %+v, %v; want only the new VM", got, err)
	}
}

func refNames(objs []events.Indexed[int]) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Ref.Name)
	}
	return out
}
