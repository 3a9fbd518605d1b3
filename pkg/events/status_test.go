package events_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

func slice(service, uid string, gen int64, status string) events.Slice {
	return events.Slice{Service: service, UID: uid, Generation: gen, Status: json.RawMessage(status)}
}

func streamLastSeq(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	st, err := js.Stream(testContext(t), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

func TestPublishStatusIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	created := slice("placement", "uid-1", 1, `{"uniqueID":"vm-42"}`)
	first, err := events.PublishStatus(ctx, js, vmA, created)
	if err != nil {
		t.Fatalf("PublishStatus = %v", err)
	}
	again, err := events.PublishStatus(ctx, js, vmA, created)
	if err != nil || again != first {
		t.Errorf("PublishStatus of an unchanged slice = %d, %v; want %d, nil", again, err, first)
	}
	if got := streamLastSeq(t, js, events.StreamStatus); got != first {
		t.Errorf("STATUS last sequence %d, want %d: an unchanged slice is not published", got, first)
	}

	placed := slice("placement", "uid-1", 2, `{"uniqueID":"vm-42","zone":"z1"}`)
	second, err := events.PublishStatus(ctx, js, vmA, placed)
	if err != nil || second <= first {
		t.Fatalf("PublishStatus of a changed slice = %d, %v; want a sequence after %d", second, err, first)
	}
	got, err := events.LastStatus(ctx, js, vmA, "placement")
	if err != nil {
		t.Fatalf("LastStatus = %v", err)
	}
	if diff := cmp.Diff(placed, got.Slice); diff != "" {
		t.Errorf("LastStatus slice mismatch (-want +got):\n%s", diff)
	}
	if got.Seq != second || got.Ref != vmA || got.Service != "placement" {
		t.Errorf("LastStatus = seq %d, %v, %q; want %d, %v, placement", got.Seq, got.Ref, got.Service, second, vmA)
	}
}

// TestPublishStatusReplicasRace shows that replicas publishing the same
// service's slice at once all succeed, one after the other.
func TestPublishStatusReplicasRace(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	s := eventstest.Server(t)
	js1, _ := eventstest.Connect(t, s)
	if err := events.Setup(ctx, js1); err != nil {
		t.Fatal(err)
	}
	js2, _ := eventstest.Connect(t, s)

	const rounds = 10
	var wg sync.WaitGroup
	for r, js := range []jetstream.JetStream{js1, js2} {
		wg.Go(func() {
			for i := range rounds {
				s := slice("power", "uid-1", int64(i), fmt.Sprintf(`{"replica":%d}`, r))
				if _, err := events.PublishStatus(ctx, js, vmA, s); err != nil {
					t.Errorf("replica %d: PublishStatus = %v", r, err)
				}
			}
		})
	}
	wg.Wait()
	if got, err := events.LastStatus(ctx, js1, vmA, "power"); err != nil || got.Slice.Generation != rounds-1 {
		t.Errorf("LastStatus = %+v, %v; want generation %d", got.Slice, err, rounds-1)
	}
}

func TestPurgeStatus(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	vmB := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-b"}

	for _, p := range []struct {
		ref events.Ref
		s   events.Slice
	}{
		{vmA, slice("placement", "uid-a", 1, `{}`)},
		{vmA, slice("power", "uid-a", 1, `{}`)},
		{vmB, slice("power", "uid-b", 1, `{}`)},
	} {
		if _, err := events.PublishStatus(ctx, js, p.ref, p.s); err != nil {
			t.Fatal(err)
		}
	}
	if err := events.PurgeStatus(ctx, js, vmA); err != nil {
		t.Fatalf("PurgeStatus = %v", err)
	}
	for _, service := range []string{"placement", "power"} {
		if _, err := events.LastStatus(ctx, js, vmA, service); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("LastStatus(%s) after purge = %v, want ErrNotFound", service, err)
		}
	}
	if _, err := events.LastStatus(ctx, js, vmB, "power"); err != nil {
		t.Errorf("LastStatus of another object after purge = %v, want it kept", err)
	}
	// The name is reused by a new object: its slices start afresh.
	reborn := slice("placement", "uid-a2", 1, `{}`)
	if _, err := events.PublishStatus(ctx, js, vmA, reborn); err != nil {
		t.Fatalf("PublishStatus after purge = %v", err)
	}
	if got, err := events.LastStatus(ctx, js, vmA, "placement"); err != nil || got.Slice.UID != "uid-a2" {
		t.Errorf("LastStatus after purge and publish = %+v, %v; want uid-a2", got.Slice, err)
	}
}

func TestPublishStatusRejects(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	tests := []struct {
		name string
		s    events.Slice
		is   error
	}{
		{"dotted service", slice("po.wer", "uid", 1, `{}`), events.ErrInvalidRef},
		{"no service", slice("", "uid", 1, `{}`), events.ErrInvalidRef},
		{"no uid", slice("power", "", 1, `{}`), nil},
	}
	if _, err := events.LastStatus(ctx, js, vmA, "*"); !errors.Is(err, events.ErrInvalidRef) {
		t.Errorf("LastStatus(service *) = %v, want ErrInvalidRef", err)
	}
	for _, tt := range tests {
		_, err := events.PublishStatus(ctx, js, vmA, tt.s)
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%s: PublishStatus = %v, want an error (%v)", tt.name, err, tt.is)
		}
	}
}

// Every publish is counted by service, kind and whether it stored a slice or found the
// same one there.
func TestPublishStatusCounted(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: "counted"}
	count := func(result string) float64 {
		t.Helper()
		reg := prometheus.NewRegistry()
		reg.MustRegister(events.Collectors()...)
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if f.GetName() == "vmop_status_publishes_total" && labels["service"] == "counter" && labels["result"] == result {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	// The counters are the process's: -count=N runs this test N times against them.
	storedBefore, unchangedBefore := count("stored"), count("unchanged")
	for _, status := range []string{`{"a":1}`, `{"a":1}`, `{"a":2}`} {
		if _, err := events.PublishStatus(t.Context(), js, ref, slice("counter", "u1", 1, status)); err != nil {
			t.Fatal(err)
		}
	}
	if stored, unchanged := count("stored")-storedBefore, count("unchanged")-unchangedBefore; stored != 2 || unchanged != 1 {
		t.Errorf("counted %v stored, %v unchanged; want 2 and 1", stored, unchanged)
	}
}
