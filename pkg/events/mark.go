package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrDiverged means a stream no longer holds the history a reader recorded a position in:
// it was recreated, reset, restored from an older copy, or lost writes it had acknowledged.
var ErrDiverged = errors.New("stream diverged from the recorded position")

// Mark identifies the message at a stream position. A reader that saves how far it has
// read saves the mark with it and checks it ([CheckMark]) before resuming, so that it
// does not read on from a position in another history.
type Mark struct {
	Seq     uint64
	Subject string
	Digest  string // hex SHA-256 of the message's Vmop-Op header and body
}

// MarkOf is the mark of the message at seq.
func MarkOf(seq uint64, subject string, hdr nats.Header, data []byte) Mark {
	h := sha256.New()
	h.Write([]byte(hdr.Get(HeaderOp)))
	h.Write([]byte{0})
	h.Write(data)
	return Mark{Seq: seq, Subject: subject, Digest: hex.EncodeToString(h.Sum(nil))}
}

// CheckMark returns nil when stream still holds the history m was taken from: the message
// at m.Seq is the marked one, or it is gone because its subject has a newer message (the
// per-subject limit, a tombstone's roll-up) or was emptied (the purge of a deleted object's
// status). Otherwise it returns an error wrapping [ErrDiverged] that says why. The zero
// mark (nothing read yet) always holds.
func CheckMark(ctx context.Context, js jetstream.JetStream, stream string, m Mark) error {
	if m.Seq == 0 {
		return nil
	}
	st, err := streamHandle(ctx, js, stream)
	if err != nil {
		return fmt.Errorf("check %s position %d: %w", stream, m.Seq, err)
	}
	var info *jetstream.StreamInfo
	if err := Ask(ctx, func(ctx context.Context) (err error) {
		info, err = st.Info(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("check %s position %d: %w", stream, m.Seq, err)
	}
	if last := info.State.LastSeq; last < m.Seq {
		return fmt.Errorf("%s ends at %d, before the recorded position %d: %w", stream, last, m.Seq, ErrDiverged)
	}
	raw, err := readAsLeader(ctx, js, stream, msgGet{Seq: m.Seq})
	switch {
	case err == nil:
		if got := MarkOf(raw.Sequence, raw.Subject, raw.Header, raw.Data); got != m {
			return fmt.Errorf("%s %d is another message (%s) than the recorded one (%s): %w",
				stream, m.Seq, raw.Subject, m.Subject, ErrDiverged)
		}
		return nil
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("check %s position %d: %w", stream, m.Seq, err)
	}
	newest, err := readAsLeader(ctx, js, stream, msgGet{LastFor: m.Subject})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil // the subject was purged
	case err != nil:
		return fmt.Errorf("check %s position %d: %w", stream, m.Seq, err)
	case newest.Sequence > m.Seq:
		return nil // superseded
	}
	return fmt.Errorf("%s %d is gone but %s was not written since (its newest is %d): %w",
		stream, m.Seq, m.Subject, newest.Sequence, ErrDiverged)
}
