package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderOp is the SPECS header saying what a record does; absent means [OpPut].
const HeaderOp = "Vmop-Op"

// Operations of a SPECS record.
const (
	OpPut    = "put"    // the object exists with this body
	OpDelete = "delete" // tombstone: the object no longer exists; the body is its last state
)

// SpecRecord is one SPECS message: the whole object without status.
type SpecRecord struct {
	Ref    Ref
	Seq    uint64 // SPECS stream sequence
	Op     string // OpPut or OpDelete
	Body   []byte
	Time   time.Time
	Header nats.Header
}

// AppendSpec appends a record for ref if the last SPECS sequence of its
// subject is expectLastSeq (0 when the object has no record yet) and returns
// the new record's sequence. op is [OpPut] ("" means put) or [OpDelete]; hdr
// holds extra headers (for example a request id) and is not modified.
//
// A tombstone ([OpDelete]) rolls the subject up: JetStream removes the
// object's earlier records, so a finished object leaves only its tombstone
// (the CAS base of a re-creation) behind.
//
// A concurrent writer makes it fail with an error wrapping [ErrConflict]. A
// retried call with the same arguments after a lost answer returns the
// sequence of the record the first call stored instead of appending twice.
func AppendSpec(ctx context.Context, js jetstream.JetStream, ref Ref, op string, body []byte, expectLastSeq uint64, hdr nats.Header) (uint64, error) {
	if op == "" {
		op = OpPut
	}
	if err := ref.Validate(); err != nil {
		return 0, fmt.Errorf("append spec: %w", err)
	}
	if op != OpPut && op != OpDelete {
		return 0, fmt.Errorf("append spec %s: unknown op %q", ref, op)
	}
	msg := &nats.Msg{Subject: SpecSubject(ref), Data: body, Header: copyHeader(hdr)}
	msg.Header.Set(HeaderOp, op)
	if op == OpDelete {
		msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	}
	ctx, span := startPublish(ctx, StreamSpecs, msg.Subject, msg.Header)
	seq, err := casPublish(ctx, js, StreamSpecs, msg, expectLastSeq)
	if err != nil {
		err = fmt.Errorf("append spec %s at %d: %w", ref, expectLastSeq, err)
	}
	endSpan(span, err)
	return seq, err
}

// LastSpec returns the newest SPECS record of ref, which is a tombstone
// ([OpDelete]) if the object was removed. It returns an error wrapping
// [ErrNotFound] when the object never existed.
func LastSpec(ctx context.Context, js jetstream.JetStream, ref Ref) (SpecRecord, error) {
	if err := ref.Validate(); err != nil {
		return SpecRecord{}, fmt.Errorf("read spec: %w", err)
	}
	raw, err := lastMsg(ctx, js, StreamSpecs, SpecSubject(ref))
	if err != nil {
		return SpecRecord{}, fmt.Errorf("read spec %s: %w", ref, err)
	}
	return ParseRawSpecMsg(raw)
}

// SpecAt returns the SPECS record at stream sequence seq, which must be ref's. It returns
// an error wrapping [ErrNotFound] when the stream no longer holds it.
func SpecAt(ctx context.Context, js jetstream.JetStream, ref Ref, seq uint64) (SpecRecord, error) {
	st, err := streamHandle(ctx, js, StreamSpecs)
	if err != nil {
		return SpecRecord{}, fmt.Errorf("read spec %s at %d: %w", ref, seq, err)
	}
	raw, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		err = ErrNotFound
	}
	if err != nil {
		return SpecRecord{}, fmt.Errorf("read spec %s at %d: %w", ref, seq, err)
	}
	if raw.Subject != SpecSubject(ref) {
		return SpecRecord{}, fmt.Errorf("read spec %s at %d: the record is %s's: %w", ref, seq, raw.Subject, ErrNotFound)
	}
	return ParseRawSpecMsg(raw)
}

// ParseSpecMsg decodes a SPECS message received from a consumer. Errors wrap
// [ErrMalformed].
func ParseSpecMsg(msg jetstream.Msg) (SpecRecord, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return SpecRecord{}, fmt.Errorf("spec message %s: %w: %w", msg.Subject(), ErrMalformed, err)
	}
	return specRecord(msg.Subject(), meta.Sequence.Stream, meta.Timestamp, msg.Headers(), msg.Data())
}

// ParseRawSpecMsg decodes a SPECS message read with a get (for example
// [jetstream.Stream.GetMsg]). Errors wrap [ErrMalformed].
func ParseRawSpecMsg(raw *jetstream.RawStreamMsg) (SpecRecord, error) {
	return specRecord(raw.Subject, raw.Sequence, raw.Time, raw.Header, raw.Data)
}

func specRecord(subject string, seq uint64, t time.Time, hdr nats.Header, body []byte) (SpecRecord, error) {
	ref, err := ParseSpecSubject(subject)
	if err != nil {
		return SpecRecord{}, err
	}
	op := hdr.Get(HeaderOp)
	switch op {
	case "":
		op = OpPut
	case OpPut, OpDelete:
	default:
		return SpecRecord{}, fmt.Errorf("spec message %s: op %q: %w", subject, op, ErrMalformed)
	}
	return SpecRecord{Ref: ref, Seq: seq, Op: op, Body: body, Time: t, Header: hdr}, nil
}

// copyHeader returns a non-nil copy of h that the caller may modify.
func copyHeader(h nats.Header) nats.Header {
	c := make(nats.Header, len(h)+4)
	for k, v := range h {
		c[k] = slices.Clone(v)
	}
	return c
}
