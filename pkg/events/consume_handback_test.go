package events_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A message whose handler a stop cuts short goes back to the server for the next consumer
// at once. Handed back while the stopping consumer's pull is still open, the server would
// send it straight back there, where it is dropped, and nobody would see it again before
// the AckWait (30 s) ran out. Each round stops the consumer just as its handler gives up
// the message, and the next round's consumer must be handed it within waitTimeout.
func TestConsumeHandsBackAMessageCutShortByAStop(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	appendSpec(t, js, vmA, 0, `{}`)
	for range 10 {
		handed := make(chan struct{}, 1)
		stop := make(chan context.CancelFunc, 1)
		r := runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
			(<-stop)() // the service stops as it works on the message
			handed <- struct{}{}
			return ctx.Err()
		})
		stop <- r.cancel
		receive(t, "the message handed to the consumer", handed)
		if err := r.stop(t); err != nil {
			t.Fatalf("Consume after cancel = %v, want nil", err)
		}
	}
}
