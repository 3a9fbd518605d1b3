package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// casPublish stores msg only if the last sequence of msg.Subject is expect
// (0: the subject is empty) and returns the message's stream sequence. It
// returns a bare [ErrConflict] when another message got there first.
//
// The Nats-Msg-Id is "<subject>@<expect>#<content hash>". The same content
// published again at the same expectation (a retry after a lost ack)
// collapses into the first; different content at the same expectation (a
// concurrent writer) has a different id, so the CAS rejects it instead of the
// deduplication mistaking it for a retry and reporting a success.
func casPublish(ctx context.Context, js jetstream.JetStream, stream string, msg *nats.Msg, expect uint64) (uint64, error) {
	id := casMsgID(msg, expect)
	trace.SpanFromContext(ctx).SetAttributes(attribute.String(attrMessageID, id))
	ack, err := publishDeduplicated(ctx, js, msg, id, jetstream.WithExpectLastSequencePerSubject(expect))
	if err == nil {
		return ack.Sequence, nil // also when ack.Duplicate: our earlier attempt stored it
	}
	if !isWrongLastSequence(err) {
		return 0, err
	}
	// A single server checks the expected sequence before the deduplication,
	// so the retry of a publish that did land fails the CAS: recognise it.
	if seq, ok := landed(ctx, js, stream, msg.Subject, id); ok {
		return seq, nil
	}
	return 0, ErrConflict
}

func casMsgID(msg *nats.Msg, expect uint64) string {
	h := sha256.New()
	h.Write([]byte(msg.Header.Get(HeaderOp)))
	h.Write([]byte{0})
	h.Write(msg.Data)
	return msg.Subject + "@" + strconv.FormatUint(expect, 10) + "#" + hex.EncodeToString(h.Sum(nil)[:16])
}

// isWrongLastSequence reports whether err is the server's answer to a failed
// Expected-Last-Subject-Sequence check: 10071 on a single replica, 10164 on a
// replicated stream.
func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// landed reports whether the last message of subject is the one with the
// given Nats-Msg-Id, and its sequence.
func landed(ctx context.Context, js jetstream.JetStream, stream, subject, id string) (uint64, bool) {
	raw, err := lastMsg(ctx, js, stream, subject)
	if err != nil || raw.Header.Get(jetstream.MsgIDHeader) != id {
		return 0, false
	}
	return raw.Sequence, true
}

// lastMsg reads the newest message of subject (a direct get: SPECS and STATUS
// allow it). It returns a bare [ErrNotFound] when the subject is empty.
func lastMsg(ctx context.Context, js jetstream.JetStream, stream, subject string) (*jetstream.RawStreamMsg, error) {
	st, err := streamHandle(ctx, js, stream)
	if err != nil {
		return nil, err
	}
	raw, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	return raw, err
}

// handles caches stream handles per connection: js.Stream costs a STREAM.INFO request, and
// every read would otherwise pay it before its direct get. A handle only carries the
// stream's name and settings, which stay valid across a re-creation of the stream.
var handles sync.Map // handleKey → jetstream.Stream

type handleKey struct {
	js     jetstream.JetStream
	stream string
}

func streamHandle(ctx context.Context, js jetstream.JetStream, stream string) (jetstream.Stream, error) {
	key := handleKey{js, stream}
	if h, ok := handles.Load(key); ok {
		return h.(jetstream.Stream), nil
	}
	var st jetstream.Stream
	if err := Ask(ctx, func(ctx context.Context) (err error) {
		st, err = js.Stream(ctx, stream)
		return err
	}); err != nil {
		return nil, err
	}
	h := answered{st}
	handles.Store(key, h)
	return h, nil
}
