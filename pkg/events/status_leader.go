package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LastStatusFromLeader is [LastStatus] answered by the STATUS stream's leader: on a
// replicated stream a direct get may be answered by a follower that has not applied the
// newest slice yet, and a reconcile that takes an object over from another replica must
// see that replica's last slice before it acts. Without a cluster the direct get is the
// leader's answer; in one the leader's answer comes without the headers.
func LastStatusFromLeader(ctx context.Context, js jetstream.JetStream, ref Ref, service string) (StatusRecord, error) {
	if leaderAnswersDirect(js) {
		return LastStatus(ctx, js, ref, service)
	}
	m, err := leaderLast(ctx, js, StatusSubject(ref, service))
	if err != nil {
		return StatusRecord{}, fmt.Errorf("read status %s of %s: %w", service, ref, err)
	}
	t, _ := time.Parse(time.RFC3339Nano, m.Time) // only informative: a zero time is harmless
	return statusRecord(m.Subject, m.Seq, t, nil, m.Data)
}

// lastToCompare is the newest STATUS message of msg's subject (its sequence and content),
// for a publish that stores nothing when it holds msg's content already. In a cluster a
// direct get may be answered by a follower that lags behind: an answer holding that
// content decides that nothing is published, so the leader confirms it.
func lastToCompare(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) (seq uint64, data []byte, err error) {
	last, err := lastMsg(ctx, js, StreamStatus, msg.Subject)
	if err != nil {
		return 0, nil, err
	}
	if !bytes.Equal(last.Data, msg.Data) || leaderAnswersDirect(js) {
		return last.Sequence, last.Data, nil
	}
	m, err := leaderLast(ctx, js, msg.Subject)
	if err != nil {
		return 0, nil, err
	}
	return m.Seq, m.Data, nil
}

// leaderMsg is a STATUS message as the stream's leader answers a get.
type leaderMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
	Time    string `json:"time"`
}

// leaderLast is subject's newest STATUS message as the stream's leader answers it;
// ErrNotFound when there is none.
func leaderLast(ctx context.Context, js jetstream.JetStream, subject string) (leaderMsg, error) {
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return leaderMsg{}, err
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
		return leaderMsg{}, err
	}
	var answer struct {
		Message *leaderMsg          `json:"message"`
		Error   *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &answer); err != nil {
		return leaderMsg{}, err
	}
	switch {
	case answer.Error != nil && answer.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return leaderMsg{}, ErrNotFound
	case answer.Error != nil:
		return leaderMsg{}, answer.Error
	case answer.Message == nil:
		return leaderMsg{}, fmt.Errorf("%w: empty answer", ErrMalformed)
	}
	return *answer.Message, nil
}
