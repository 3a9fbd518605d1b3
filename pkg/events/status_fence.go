package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A status fence makes every PublishStatus of one slice, under a context, a
// compare-and-swap against the slice a reconcile read, then against what it published
// itself since: a slice published meanwhile by anyone else (another replica, one that
// lost its lease) fails it with ErrConflict, and the reconcile starts again from a fresh
// read instead of overwriting what it never saw.
type statusFence struct {
	subject string
	mu      sync.Mutex
	seq     uint64 // the subject's last sequence the holder knows of; 0: none
}

type fenceKey struct{}

// FenceStatus returns a context under which publishing service's slice of ref succeeds
// only while the slice's last STATUS sequence is seq (0: none), the one the caller read;
// each publish moves the fence to its own sequence.
func FenceStatus(ctx context.Context, ref Ref, service string, seq uint64) context.Context {
	return context.WithValue(ctx, fenceKey{}, &statusFence{subject: StatusSubject(ref, service), seq: seq})
}

// fenceFor returns ctx's fence when it guards subject.
func fenceFor(ctx context.Context, subject string) *statusFence {
	f, _ := ctx.Value(fenceKey{}).(*statusFence)
	if f == nil || f.subject != subject {
		return nil
	}
	return f
}

// publish stores msg when the subject's last sequence is still the fence's. The same
// content already there is success, whoever wrote it: the slice is what the caller wants
// (stored is false then).
func (f *statusFence) publish(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) (seq uint64, stored bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	last, err := lastMsg(ctx, js, StreamStatus, msg.Subject)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return 0, false, err
	case bytes.Equal(last.Data, msg.Data):
		f.seq = last.Sequence
		return last.Sequence, false, nil
	}
	seq, err = casPublish(ctx, js, StreamStatus, msg, f.seq)
	if err != nil {
		return 0, false, err
	}
	f.seq = seq
	return seq, true, nil
}

// LastStatusFromLeader is [LastStatus] answered by the STATUS stream's leader: on a
// replicated stream a direct get may be answered by a follower that has not applied the
// newest slice yet, and a reconcile that takes an object over from another replica must
// see that replica's last slice before it acts. Without a cluster the direct get is the
// leader's answer; in one the leader's answer comes without the headers.
func LastStatusFromLeader(ctx context.Context, js jetstream.JetStream, ref Ref, service string) (StatusRecord, error) {
	if leaderAnswersDirect(js) {
		return LastStatus(ctx, js, ref, service)
	}
	subject := StatusSubject(ref, service)
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return StatusRecord{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		// As nats.go bounds its own API requests: a request lost in a leader election
		// would otherwise wait forever, holding the reconcile and its lease.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, js.Options().DefaultTimeout)
		defer cancel()
	}
	resp, err := js.Conn().RequestWithContext(ctx, jsAPI+"STREAM.MSG.GET."+StreamStatus, req)
	if err != nil {
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, err)
	}
	var answer struct {
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Header  []byte `json:"hdrs"`
			Data    []byte `json:"data"`
			Time    string `json:"time"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &answer); err != nil {
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, err)
	}
	switch {
	case answer.Error != nil && answer.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, ErrNotFound)
	case answer.Error != nil:
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, answer.Error)
	case answer.Message == nil:
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w: empty answer", service, ref, ErrMalformed)
	}
	m := answer.Message
	t, _ := time.Parse(time.RFC3339Nano, m.Time) // only informative: a zero time is harmless
	return statusRecord(m.Subject, m.Seq, t, nil, m.Data)
}
