package events

import (
	"context"
	"errors"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// forwardBatch is how many messages one batched direct get of readForward asks for.
const forwardBatch = 512

// readForward passes each message of stream whose subject matches filter, from sequence
// from on, to each in stream order, until it reached where the stream ended when the last
// batch was read. It reads by batched direct gets, which every identity may make of the
// streams it reads (a consumer it may not create).
func readForward(ctx context.Context, js jetstream.JetStream, stream, filter string, from uint64, each func(*jetstream.RawStreamMsg)) error {
	for {
		msgs, err := jetstreamext.GetBatch(ctx, js, stream, forwardBatch,
			jetstreamext.GetBatchSeq(from), jetstreamext.GetBatchSubject(filter))
		if err != nil {
			return err
		}
		read, pending := 0, ""
		for raw, err := range msgs {
			if errors.Is(err, jetstreamext.ErrNoMessages) {
				return nil // nothing from there on
			}
			if err != nil {
				return err
			}
			read++
			from, pending = raw.Sequence+1, raw.Header.Get(numPendingHeader)
			each(raw)
		}
		n, err := strconv.ParseUint(pending, 10, 64)
		if err == nil && n == 0 || err != nil && read < forwardBatch {
			return nil
		}
	}
}
