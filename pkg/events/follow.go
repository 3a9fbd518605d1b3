package events

import (
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

// Follow iterates an ordered consumer's messages, noticing a lost server within seconds.
func Follow(cons jetstream.Consumer) (jetstream.MessagesContext, error) {
	return cons.Messages(jetstream.PullExpiry(followExpiry), jetstream.PullHeartbeat(followHeartbeat))
}
