package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsErrCodeDuplicateInProcess is a replicated stream's answer to a message whose
// Nats-Msg-Id another publish is storing at that moment (JSStreamDuplicateMessageConflict).
const jsErrCodeDuplicateInProcess jetstream.ErrorCode = 10158

// inProcessAttempts bounds how often publishDeduplicated sends again while an identical
// message is being stored (20 ms, 40 ms, ...: about a second in all).
const inProcessAttempts = 10

// publishDeduplicated publishes msg with the Nats-Msg-Id id. Two publishers of one id
// (two gateways seeding the same status, announcing the same CloudEvent) publish the same
// message: when a replicated stream answers that the other's is being stored, this waits
// and sends again, and the stream answers with the stored message's ack (a duplicate), or
// with why it refused it.
func publishDeduplicated(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, id string, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	opts = append(append(opts, publishUntilAnswered...), jetstream.WithMsgID(id))
	for attempt := 1; ; attempt++ {
		ack, err := js.PublishMsg(ctx, msg, opts...)
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != jsErrCodeDuplicateInProcess || attempt == inProcessAttempts {
			return ack, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}
