package events

import (
	"bytes"
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LastStatusFromLeader is [LastStatus] answered by the STATUS stream's leader: on a
// replicated stream a direct get may be answered by a follower that has not applied the
// newest slice yet, and a reconcile that takes an object over from another replica must
// see that replica's last slice before it acts. Without a cluster the direct get is the
// leader's answer.
func LastStatusFromLeader(ctx context.Context, js jetstream.JetStream, ref Ref, service string) (StatusRecord, error) {
	raw, err := readAsLeader(ctx, js, StreamStatus, msgGet{LastFor: StatusSubject(ref, service)})
	if err != nil {
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, err)
	}
	return ParseRawStatusMsg(raw)
}

// lastToCompare is the newest STATUS message of msg's subject (its sequence and content),
// for a publish that stores nothing when it holds msg's content already. In a cluster a
// direct get may be answered by a follower that lags behind: an answer holding that
// content decides that nothing is published, so the leader confirms it.
func lastToCompare(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) (seq uint64, data []byte, err error) {
	last, err := lastMsg(ctx, js, StreamStatus, msg.Subject)
	if err != nil {
		return 0, nil, err
	}
	if !bytes.Equal(last.Data, msg.Data) || leaderAnswersDirect(js) {
		return last.Sequence, last.Data, nil
	}
	m, err := leaderGet(ctx, js, StreamStatus, msgGet{LastFor: msg.Subject})
	if err != nil {
		return 0, nil, err
	}
	return m.Sequence, m.Data, nil
}
