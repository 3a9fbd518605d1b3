package events

import (
	"bytes"
	"context"
	"errors"
	"sync"

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
	last, data, err := lastToCompare(ctx, js, msg)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return 0, false, err
	case bytes.Equal(data, msg.Data):
		f.seq = last
		return last, false, nil
	}
	seq, err = casPublish(ctx, js, StreamStatus, msg, f.seq)
	if err != nil {
		return 0, false, err
	}
	f.seq = seq
	return seq, true, nil
}
