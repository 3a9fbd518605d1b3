package deploytest

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// WaitProcessed waits, with a deadline, until service's SPECS consumer has acknowledged
// every record up to seq: whatever they made the service do is done (a reconcile that
// published nothing included).
func WaitProcessed(t testing.TB, js jetstream.JetStream, service string, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := js.Consumer(t.Context(), events.StreamSpecs, events.Durable(service))
		if err == nil {
			if info, err := c.Info(t.Context()); err == nil && info.AckFloor.Stream >= seq {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not process SPECS up to %d before the deadline", service, seq)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}
