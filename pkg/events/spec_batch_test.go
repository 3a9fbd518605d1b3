package events_test

import (
	"fmt"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// LastSpecsOf answers what LastSpec answers for each ref, over more refs than one batch
// holds: the newest record, a tombstone as such, nothing for a ref never written.
func TestLastSpecsOfReadsTheNewestRecordOfEach(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	const n = 1100 // more than one request's 1,024
	refs := make([]events.Ref, n+1)
	for i := range n {
		refs[i] = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: fmt.Sprintf("vm-%04d", i)}
		seq, err := events.AppendSpec(ctx, js, refs[i], events.OpPut, fmt.Appendf(nil, `{"v":1,"i":%d}`, i), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // some have a newer record, one a tombstone
			op, body := events.OpPut, fmt.Appendf(nil, `{"v":2,"i":%d}`, i)
			if i == 500 {
				op, body = events.OpDelete, nil
			}
			if _, err := events.AppendSpec(ctx, js, refs[i], op, body, seq, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	refs[n] = events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "never-written"}

	got, err := events.LastSpecsOf(ctx, js, refs)
	if err != nil {
		t.Fatalf("LastSpecsOf = %v", err)
	}
	if len(got) != n {
		t.Errorf("%d records, want %d (none for the ref never written)", len(got), n)
	}
	every, err := events.LastSpecsEverywhere(ctx, js, "virtualmachines")
	if err != nil || len(every) != n || every[0].Ref != refs[0] || every[n-1].Ref != refs[n-1] {
		t.Errorf("LastSpecsEverywhere = %d records, %v; want the %d there are in subject order", len(every), err, n)
	}
	for _, ref := range refs[:n] {
		want, err := events.LastSpec(ctx, js, ref)
		if err != nil {
			t.Fatal(err)
		}
		if rec := got[ref]; rec.Seq != want.Seq || rec.Op != want.Op || string(rec.Body) != string(want.Body) {
			t.Errorf("%s: seq %d op %s %s, want seq %d op %s %s", ref, rec.Seq, rec.Op, rec.Body, want.Seq, want.Op, want.Body)
		}
	}
}
