package events_test

import (
	"encoding/json"
	"fmt"
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
}
