package events_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A stream set-up request the server leaves unanswered (a clustered one drops some while
// a group elects its leader) is asked again after the JetStream timeout, not waited on
// until the caller's deadline; one that keeps going unanswered fails after a few asks.
func TestSetupAsksAgainWhenUnanswered(t *testing.T) {
	s := eventstest.Server(t)
	var lost atomic.Int32
	loseAll := atomic.Bool{}
	// A gateway to JetStream's API that loses SPECS's info requests: the first one, or all.
	js := eventstest.Lossy(t, s, 500*time.Millisecond, func(subject string, _ *nats.Msg, _ *string) bool {
		if subject == "$JS.API.STREAM.INFO."+events.StreamSpecs && (loseAll.Load() || lost.Load() == 0) {
			lost.Add(1)
			return true
		}
		return false
	})
	// A deadline far beyond the test's own: nats.go would wait it out for a lost request.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	start := time.Now()
	if err := events.Setup(ctx, js); err != nil || lost.Load() != 1 {
		t.Fatalf("Setup after one lost request: %v (%d lost)", err, lost.Load())
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("Setup took %v after one lost request", took)
	}

	loseAll.Store(true)
	lost.Store(0)
	if err := events.Setup(ctx, js); err == nil || lost.Load() != 3 {
		t.Errorf("Setup with every info request lost: %v after %d asks; want an error after 3", err, lost.Load())
	}
}
