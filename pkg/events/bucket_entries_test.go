package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// BucketEntries reads each key's value and revision, over more than one batch, without
// the keys deleted or purged, whatever their order in the stream.
func TestBucketEntriesReadsEveryKey(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	ctx := t.Context()
	kv, err := events.IPAM(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1200
	started := time.Now()
	want := map[string]uint64{}
	for i := range n {
		key := fmt.Sprintf("10.0.%d.%d", i/250, i%250)
		rev, err := kv.Create(ctx, key, []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		want[key] = rev
	}
	for i := 0; i < n; i += 7 {
		key := fmt.Sprintf("10.0.%d.%d", i/250, i%250)
		if i%2 == 0 {
			err = kv.Delete(ctx, key)
		} else {
			err = kv.Purge(ctx, key)
		}
		if err != nil {
			t.Fatal(err)
		}
		delete(want, key)
	}
	rev, err := kv.Put(ctx, "10.0.0.1", []byte("again")) // rewritten after the deletes
	if err != nil {
		t.Fatal(err)
	}
	want["10.0.0.1"] = rev

	got, err := events.BucketEntries(ctx, js, events.BucketIPAM)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d entries, want %d", len(got), len(want))
	}
	for key, rev := range want {
		if e, ok := got[key]; !ok || e.Revision != rev || e.Written.Before(started) || e.Written.After(time.Now()) {
			t.Errorf("%s: %+v (found %v), want revision %d, written during the test", key, e, ok, rev)
		}
	}
	if v := string(got["10.0.0.1"].Value); v != "again" {
		t.Errorf("10.0.0.1 = %q, want the rewritten value", v)
	}
}
