package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// An ordered consumer lives on one server, in memory: when that server stops, the client
// notices only when heartbeats stop coming and then recreates it on another at the next
// sequence. nats.go's defaults (30 s pulls, 15 s heartbeats) leave a follower of the
// streams about 30 s behind after a node is lost, longer than a consistent read waits;
// these make it a few seconds.
const (
	followExpiry    = 5 * time.Second
	followHeartbeat = time.Second
)

// followResetAttempts is how many times an ordered consumer tries to recreate itself
// under the same name before its iterator fails. A server that was killed (rather than
// shut down) still counts as a live peer for minutes (its cluster hears of no shutdown),
// so the recreated consumer may be placed on it: its creation then goes unanswered, and
// nats.go's unlimited default asks again under that same name, which stays placed there,
// forever. Failing after one attempt lets the follower open a new consumer, which gets a
// new name and a new placement.
const followResetAttempts = 1

// Feed is a stream followed by an ordered consumer, and where the stream and the consumer
// stood when it opened. Stop it when done.
type Feed struct {
	jetstream.MessagesContext
	StreamLast uint64 // the stream's last sequence when the feed opened
	Pending    uint64 // the messages the consumer had to deliver when it opened
	Delivered  uint64 // the messages it had delivered by then
}

// Follow opens a Feed of stream as cfg says, noticing a lost server within seconds. A
// request that goes unanswered (a leader election, or a consumer placed on a killed
// server) is asked again with a new consumer, as [Ask] does; when the feed fails later
// (its consumer could not be recreated), the caller follows the stream again from where
// it got to.
func Follow(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.OrderedConsumerConfig) (*Feed, error) {
	cfg.MaxResetAttempts = followResetAttempts
	var feed *Feed
	err := Ask(ctx, func(ctx context.Context) error {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return fmt.Errorf("open stream %s: %w", stream, err)
		}
		cons, err := st.OrderedConsumer(ctx, cfg)
		if err != nil {
			return fmt.Errorf("consume stream %s: %w", stream, err)
		}
		it, err := cons.Messages(jetstream.PullExpiry(followExpiry), jetstream.PullHeartbeat(followHeartbeat))
		if err != nil {
			return fmt.Errorf("consume stream %s: %w", stream, err)
		}
		ci, err := cons.Info(ctx)
		if err != nil {
			it.Stop()
			return fmt.Errorf("consume stream %s: %w", stream, err)
		}
		feed = &Feed{MessagesContext: it, StreamLast: st.CachedInfo().State.LastSeq, Pending: ci.NumPending, Delivered: ci.Delivered.Consumer}
		return nil
	})
	return feed, err
}

// ErrFeed marks a failure to follow a stream (NATS, not the follower's own work):
// [FollowAgain] follows it again.
var ErrFeed = errors.New("feed of the stream failed")

// How long FollowAgain waits before following again: doubling from followAgainMin up to
// followAgainMax while the stream cannot be followed at all.
const (
	followAgainMin = 100 * time.Millisecond
	followAgainMax = 5 * time.Second
)

// FollowAgain runs follow until ctx ends, and again after each failure wrapping [ErrFeed],
// logged with msg: after followAgainMin when its feed had opened (opened), else after a
// wait that doubles while the stream cannot be followed at all. It returns nil when ctx ends, or follow's
// first other error.
func FollowAgain(ctx context.Context, log *slog.Logger, msg string, follow func(ctx context.Context) (opened bool, err error)) error {
	for wait := followAgainMin; ; wait = min(2*wait, followAgainMax) {
		opened, err := follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, ErrFeed) {
			return err
		}
		if opened {
			wait = followAgainMin
		}
		log.Warn(msg, "err", err, "after", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
