package events_test

import (
	"slices"
	"strings"
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
	MaxBytes          int64
	Discard           jetstream.DiscardPolicy
	AllowRollup       bool
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
	const mib = 1 << 20
	dropOld, refuseNew := jetstream.DiscardOld, jetstream.DiscardNew
	want := map[string]streamShape{
		events.StreamSpecs:  {[]string{"vmop.spec.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, 8, 0, twoMinutes, true, 1024 * mib, refuseNew, true},
		events.StreamStatus: {[]string{"vmop.status.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, 1, 0, twoMinutes, true, 512 * mib, refuseNew, false},
		events.StreamEvents: {[]string{"vmop.events.>"}, jetstream.LimitsPolicy, jetstream.FileStorage, -1, week, twoMinutes, false, 1024 * mib, dropOld, false},
		events.StreamDeadLetter: {
			[]string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.SPECS.>"},
			jetstream.LimitsPolicy, jetstream.FileStorage, -1, 30 * 24 * time.Hour, twoMinutes, false, 128 * mib, dropOld, false,
		},
	}
	got := map[string]streamShape{}
	for name := range want {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		c := st.CachedInfo().Config
		got[name] = streamShape{c.Subjects, c.Retention, c.Storage, c.MaxMsgsPerSubject, c.MaxAge, c.Duplicates, c.AllowDirect,
			c.MaxBytes, c.Discard, c.AllowRollup}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream configs mismatch (-want +got):\n%s", diff)
	}
}

// A restart must not update streams whose configuration is current: the update races
// the consumers other services are creating.
func TestSetupLeavesCurrentStreamsAlone(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, nc := eventstest.Connect(t, eventstest.Server(t))
	if err := events.Setup(ctx, js); err != nil {
		t.Fatalf("Setup() = %v", err)
	}
	updates, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.STREAM.UPDATED.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := events.Setup(ctx, js); err != nil {
		t.Fatalf("second Setup() = %v", err)
	}
	// A changed stream does get updated, and its advisory follows any earlier one.
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: events.StreamEvents, Subjects: []string{"vmop.events.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := events.Setup(ctx, js); err != nil {
		t.Fatalf("third Setup() = %v", err)
	}
	var updated []string
	for range 2 {
		msg, err := updates.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("updated advisories so far %v: %v", updated, err)
		}
		updated = append(updated, msg.Subject[strings.LastIndex(msg.Subject, ".")+1:])
	}
	if want := []string{events.StreamEvents, events.StreamEvents}; !slices.Equal(updated, want) {
		t.Errorf("stream updates %v, want only the test's and Setup's update of %s", updated, want)
	}
}

func TestDurable(t *testing.T) {
	if got, want := events.Durable("power"), "vmop-power"; got != want {
		t.Errorf("Durable(power) = %q, want %q", got, want)
	}
}
