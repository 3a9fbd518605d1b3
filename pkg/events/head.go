package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Head is the sequence of the newest message stream holds as its leader knows it: how far
// a reader must have come to have seen every write acknowledged before the call (the
// gateway's consistent reads wait for it).
//
// The direct get finds no newest message when the stream's last one was deleted (a purged
// status slice): the stream information then says where the stream ends.
func Head(ctx context.Context, js jetstream.JetStream, stream string) (uint64, error) {
	if leaderAnswersDirect(js) {
		raw, err := lastMsg(ctx, js, stream, ">")
		if err == nil {
			return raw.Sequence, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return 0, fmt.Errorf("read the head of %s: %w", stream, err)
		}
	}
	st, err := js.Stream(ctx, stream) // a stream information request, which the leader answers
	if err != nil {
		return 0, fmt.Errorf("read the head of %s: %w", stream, err)
	}
	return st.CachedInfo().State.LastSeq, nil
}

// leaderAnswersDirect tells whether a direct get through js is its stream leader's answer:
// the server js is connected to is in no cluster, so none of its streams has another
// replica. In a cluster a follower answers direct gets too, and it may lag behind. A
// connection that is down (its requests wait for whichever server it reaches next) knows
// no cluster name: it asks the leader.
//
// The JetStream API requests a leader answers cost the server far more than a direct get:
// it decodes the requester's whole JWT, permissions and all, from every one (14 KB for the
// gateway's identity: 0.17 ms of the server's CPU per request).
func leaderAnswersDirect(js jetstream.JetStream) bool {
	nc := js.Conn()
	return nc.IsConnected() && nc.ConnectedClusterName() == ""
}
