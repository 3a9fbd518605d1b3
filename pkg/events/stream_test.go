package events_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// streamShape is the part of a stream's configuration the contracts fix.
type streamShape struct {
	Subjects          []string
	Retention         jetstream.RetentionPolicy
	Storage           jetstream.StorageType
	MaxMsgsPerSubject int64
	MaxAge            time.Duration
	Duplicates        time.Duration
	AllowDirect       bool
}

func TestSetupCreatesTheStreamsIdempotently(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.Connect(t, eventstest.Server(t))

	// A stale SPECS from an older version is brought in line.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: events.StreamSpecs, Subjects: []string{"vmop.spec.>"}, MaxMsgsPerSubject: 2}); err != nil {
		t.Fatalf("create stale stream: %v", err)
	}
	for range 2 {
		if err := events.Setup(ctx, js); err != nil {
			t.Fatalf("Setup() = %v", err)
		}
	}

	const twoMinutes, week = 2 * time.Minute, 7 * 24 * time.Hour
	want := map[string]streamShape{
		events.StreamSpecs:  {[]string{"vmop.spec.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, 8, 0, twoMinutes, true},
		events.StreamStatus: {[]string{"vmop.status.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, 1, 0, twoMinutes, true},
		events.StreamEvents: {[]string{"vmop.events.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, -1, week, twoMinutes, false},
		events.StreamDeadLetter: {
			[]string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>"},
			jetstream.LimitsPolicy, jetstream.FileStorage, -1, 30 * 24 * time.Hour, twoMinutes, false,
		},
	}
	got := map[string]streamShape{}
	for name := range want {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		c := st.CachedInfo().Config
		got[name] = streamShape{c.Subjects, c.Retention, c.Storage, c.MaxMsgsPerSubject, c.MaxAge, c.Duplicates, c.AllowDirect}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream configs mismatch (-want +got):\n%s", diff)
	}
}

func TestDurable(t *testing.T) {
	if got, want := events.Durable("power"), "vmop-power"; got != want {
		t.Errorf("Durable(power) = %q, want %q", got, want)
	}
}
