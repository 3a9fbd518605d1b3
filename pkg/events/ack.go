package events

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
)

// ackKind is what happens to a consumed message.
type ackKind int

const (
	ackDone  ackKind = iota // Ack: handled
	ackRetry                // NakWithDelay: redeliver later
	ackTerm                 // TermWithReason: never redeliver; the advisory lands in DEADLETTER
)

// ack is the decision about one message.
type ack struct {
	kind   ackKind
	delay  time.Duration // ackRetry
	reason string        // ackTerm
}

const (
	firstRetryDelay = time.Second
	maxRetryDelay   = time.Minute
	maxTermReason   = 256 // bytes of the error kept in the termination advisory
)

// ackFor is the one place that turns a handler's result into the fate of the
// message it handled, delivered being the number of deliveries so far; stopping says
// that the consumer is. Work cancelled otherwise (a lost scope lease) backs off like any
// failure.
func ackFor(err error, delivered uint64, stopping bool) ack {
	switch {
	case err == nil:
		return ack{kind: ackDone}
	case errors.Is(err, ErrPermanent), errors.Is(err, ErrMalformed):
		return ack{kind: ackTerm, reason: termReason(err)}
	case stopping && errors.Is(err, context.Canceled):
		return ack{kind: ackRetry} // another replica may take it now
	default:
		return ack{kind: ackRetry, delay: backoff(delivered)}
	}
}

// backoff is 1s after the first delivery, doubling up to a minute.
func backoff(delivered uint64) time.Duration {
	d := firstRetryDelay
	for n := uint64(1); n < delivered && d < maxRetryDelay; n++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

// termReason is err's text, cut at a rune boundary to fit an advisory.
func termReason(err error) string {
	r := err.Error()
	if len(r) <= maxTermReason {
		return r
	}
	cut := maxTermReason
	for cut > 0 && !utf8.RuneStart(r[cut]) {
		cut--
	}
	return r[:cut]
}

// settle tells the server what ackFor decided.
func (a ack) settle(msg jetstream.Msg) error {
	switch a.kind {
	case ackDone:
		return msg.Ack()
	case ackTerm:
		return msg.TermWithReason(a.reason)
	default:
		return msg.NakWithDelay(a.delay)
	}
}
