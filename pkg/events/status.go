package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// statusAttempts bounds how often PublishStatus re-reads and retries when another
// replica of the service publishes the same slice concurrently. Each lost attempt waits
// a random while below twice the bound of the one before (2 ms, 4 ms, ... 64 ms: a third
// of a second at most in all), so that a replica publishing in a burst finishes it
// instead of winning every race against one that retries at once.
const statusAttempts = 10

// Slice is one service's whole part of an object's status, never a delta.
// The object's status is the deep merge of the slices whose UID is the
// object's uid.
type Slice struct {
	Service    string          `json:"service"`
	UID        string          `json:"uid"`                // metadata.uid of the object the slice speaks about
	Generation int64           `json:"generation"`         // metadata.generation the service reconciled
	Released   bool            `json:"released,omitempty"` // the owner finished its deletion work
	Status     json.RawMessage `json:"status,omitempty"`   // this service's part of .status (a JSON object)
	// Digest sums what the service read to produce the slice (pkg/reconcile's concern
	// rule): a later generation with the same digest does not concern the service.
	Digest string `json:"digest,omitempty"`
	// Record is what the service notes about the object for its own next reconcile, which
	// the status cannot tell (a JSON value); never part of the object's status.
	Record json.RawMessage `json:"record,omitempty"`
}

// StatusRecord is one STATUS message.
type StatusRecord struct {
	Ref     Ref
	Service string
	Seq     uint64 // STATUS stream sequence
	Slice   Slice
	Time    time.Time
	Header  nats.Header
}

// PublishStatus makes s the newest slice of s.Service for ref and returns its
// STATUS sequence. It is idempotent: when the newest slice is byte-equal it
// returns that slice's sequence without publishing. A concurrent publish by
// another replica makes it re-read and retry a few times before it gives up
// with an error wrapping [ErrConflict]; under a [FenceStatus] context it does not
// retry: a slice published since the fence's read is a conflict.
func PublishStatus(ctx context.Context, js jetstream.JetStream, ref Ref, s Slice) (uint64, error) {
	if err := validSlice(ref, s); err != nil {
		return 0, fmt.Errorf("publish status: %w", err)
	}
	body, err := json.Marshal(s)
	if err != nil {
		return 0, fmt.Errorf("publish status %s of %s: %w", s.Service, ref, err)
	}
	msg := &nats.Msg{Subject: StatusSubject(ref, s.Service), Data: body, Header: nats.Header{}}
	ctx, span := startPublish(ctx, StreamStatus, msg.Subject, msg.Header)
	var seq uint64
	var stored bool
	if f := fenceFor(ctx, msg.Subject); f != nil {
		seq, stored, err = f.publish(ctx, js, msg)
	} else {
		seq, stored, err = publishSlice(ctx, js, msg)
	}
	if err != nil {
		err = fmt.Errorf("publish status %s of %s: %w", s.Service, ref, err)
	} else {
		countPublish(s.Service, ref.Plural, stored)
	}
	endSpan(span, err)
	return seq, err
}

// publishSlice stores msg unless the newest slice is the same; stored says which.
func publishSlice(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) (seq uint64, stored bool, err error) {
	for attempt := range statusAttempts {
		if err := backOff(ctx, attempt); err != nil {
			return 0, false, err
		}
		var expect uint64
		last, data, err := lastToCompare(ctx, js, msg)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return 0, false, err
		case bytes.Equal(data, msg.Data):
			return last, false, nil
		default:
			expect = last
		}
		seq, err := casPublish(ctx, js, StreamStatus, msg, expect)
		if !errors.Is(err, ErrConflict) {
			return seq, err == nil, err
		}
	}
	return 0, false, ErrConflict
}

// backOff waits before the attempt-th retry (none before the first) a random while below
// 2^attempt ms, at most 64 ms.
func backOff(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(rand.N(time.Millisecond << min(attempt, 6))):
		return nil
	}
}

func validSlice(ref Ref, s Slice) error {
	if err := ref.Validate(); err != nil {
		return err
	}
	if !plainToken(s.Service) {
		return fmt.Errorf("service %q: %w", s.Service, ErrInvalidRef)
	}
	if s.UID == "" {
		return fmt.Errorf("slice of %s for %s has no uid", s.Service, ref)
	}
	return nil
}

// LastStatus returns the newest slice of service for ref, or an error
// wrapping [ErrNotFound] when there is none.
func LastStatus(ctx context.Context, js jetstream.JetStream, ref Ref, service string) (StatusRecord, error) {
	if err := ref.Validate(); err != nil {
		return StatusRecord{}, fmt.Errorf("read status: %w", err)
	}
	if !plainToken(service) {
		return StatusRecord{}, fmt.Errorf("read status: service %q: %w", service, ErrInvalidRef)
	}
	raw, err := lastMsg(ctx, js, StreamStatus, StatusSubject(ref, service))
	if err != nil {
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, err)
	}
	return ParseRawStatusMsg(raw)
}

// PurgeStatus removes every slice of ref, once its tombstone is in SPECS. It deletes each
// slice's message (STATUS keeps one per subject) rather than purging the stream, which
// no identity but the operators' may do.
func PurgeStatus(ctx context.Context, js jetstream.JetStream, ref Ref) error {
	if err := ref.Validate(); err != nil {
		return fmt.Errorf("purge status: %w", err)
	}
	subjects, err := Subjects(ctx, js, StreamStatus, statusObjectFilter(ref))
	if err != nil {
		return fmt.Errorf("purge status of %s: %w", ref, err)
	}
	for _, subj := range subjects {
		if err := deleteLast(ctx, js, StreamStatus, subj); err != nil {
			return fmt.Errorf("purge status of %s: %w", ref, err)
		}
	}
	return nil
}

// deleteLast deletes the newest message of subject, if any; one deleted meanwhile by
// someone else is no error. It reads what the stream's leader holds (readAsLeader).
func deleteLast(ctx context.Context, js jetstream.JetStream, stream, subject string) error {
	newest := msgGet{LastFor: subject}
	raw, err := readAsLeader(ctx, js, stream, newest)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := streamHandle(ctx, js, stream)
	if err != nil {
		return err
	}
	if err := st.DeleteMsg(ctx, raw.Sequence); err != nil {
		if now, lerr := readAsLeader(ctx, js, stream, newest); errors.Is(lerr, ErrNotFound) || lerr == nil && now.Sequence != raw.Sequence {
			return nil
		}
		return fmt.Errorf("delete %s of %s: %w", subject, stream, err)
	}
	return nil
}

// ParseStatusMsg decodes a STATUS message received from a consumer. Errors
// wrap [ErrMalformed].
func ParseStatusMsg(msg jetstream.Msg) (StatusRecord, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return StatusRecord{}, fmt.Errorf("status message %s: %w: %w", msg.Subject(), ErrMalformed, err)
	}
	return statusRecord(msg.Subject(), meta.Sequence.Stream, meta.Timestamp, msg.Headers(), msg.Data())
}

// ParseRawStatusMsg decodes a STATUS message read with a get. Errors wrap
// [ErrMalformed].
func ParseRawStatusMsg(raw *jetstream.RawStreamMsg) (StatusRecord, error) {
	return statusRecord(raw.Subject, raw.Sequence, raw.Time, raw.Header, raw.Data)
}

func statusRecord(subject string, seq uint64, t time.Time, hdr nats.Header, body []byte) (StatusRecord, error) {
	ref, service, err := ParseStatusSubject(subject)
	if err != nil {
		return StatusRecord{}, err
	}
	var s Slice
	if err := json.Unmarshal(body, &s); err != nil {
		return StatusRecord{}, fmt.Errorf("status message %s: %w: %w", subject, ErrMalformed, err)
	}
	if s.Service != service {
		return StatusRecord{}, fmt.Errorf("status message %s: slice of service %q: %w", subject, s.Service, ErrMalformed)
	}
	return StatusRecord{Ref: ref, Service: service, Seq: seq, Slice: s, Time: t, Header: hdr}, nil
}
