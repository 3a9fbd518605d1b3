package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A request to a stream can find nobody answering for a moment: a server learns over its
// routes that a stream's leader listens for its subjects, and a replica answers direct
// gets only once it is current, so on a freshly created replicated stream or after a
// leader change a publish or a get meets "no responders". nats.go waits out such blips
// for publishes (twice 250 ms by default); vmop waits them out as long for both.
const (
	unansweredWait     = 50 * time.Millisecond
	unansweredAttempts = 100 // 5 s in all
)

// publishUntilAnswered makes a publish wait out a stream that does not answer yet.
var publishUntilAnswered = []jetstream.PublishOpt{
	jetstream.WithRetryWait(unansweredWait),
	jetstream.WithRetryAttempts(unansweredAttempts),
}

// answered is a stream handle whose direct gets wait out a stream that does not answer yet.
type answered struct{ jetstream.Stream }

func (s answered) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	return untilAnswered(ctx, func() (*jetstream.RawStreamMsg, error) { return s.Stream.GetMsg(ctx, seq, opts...) })
}

func (s answered) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	return untilAnswered(ctx, func() (*jetstream.RawStreamMsg, error) { return s.Stream.GetLastMsgForSubject(ctx, subject) })
}

// untilAnswered runs a request again while nobody answers it yet, within ctx.
func untilAnswered[T any](ctx context.Context, get func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		raw, err := get()
		if !errors.Is(err, nats.ErrNoResponders) || attempt == unansweredAttempts {
			return raw, err
		}
		select {
		case <-ctx.Done():
			return raw, err
		case <-time.After(unansweredWait):
		}
	}
}
