package events

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
)

// askAttempts is how many times in a row [Ask] asks a request that goes unanswered: a
// leader election is over by then, a lost cluster is not.
const askAttempts = 3

// Ask runs f, one or a few JetStream requests, asking again when one goes unanswered. A
// clustered server drops some requests without an answer, e.g. a stream's info or
// creation while its group elects a leader (as it does just after a peer created it),
// and nats.go waits for an answer until the context's deadline when it has one, else for
// its DefaultTimeout. So f gets ctx without its deadline, still cancelled with it: each
// request waits DefaultTimeout at most, and f is run again after one timed out, while
// ctx runs. (The two-replica reconcile test stalled for its whole 3-minute deadline on
// one such request.)
func Ask(ctx context.Context, f func(ctx context.Context) error) error {
	for asked := 1; ; asked++ {
		rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
		err := f(rctx)
		stop()
		cancel(nil)
		if err == nil || asked == askAttempts || !Unanswered(ctx, err) {
			return err
		}
	}
}

// Unanswered reports whether err is a JetStream request that timed out while ctx, the
// caller's, still runs: it is worth asking again.
func Unanswered(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout))
}
