package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// readAsLeader is a stream's message as the stream's leader answers a get: a direct get
// where that is the leader's answer (leaderAnswersDirect), else leaderGet. A read that
// decides what to write or delete is one: a follower that lags behind shows a history
// that is only late as another one. ErrNotFound when there is none.
func readAsLeader(ctx context.Context, js jetstream.JetStream, stream string, get msgGet) (*jetstream.RawStreamMsg, error) {
	if !leaderAnswersDirect(js) {
		return leaderGet(ctx, js, stream, get)
	}
	if get.LastFor != "" {
		return lastMsg(ctx, js, stream, get.LastFor)
	}
	st, err := streamHandle(ctx, js, stream)
	if err != nil {
		return nil, err
	}
	raw, err := st.GetMsg(ctx, get.Seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	return raw, err
}

// msgGet asks for one message of a stream: the one at Seq, or the newest of subject LastFor.
type msgGet struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
}

// leaderGet is a stream's message as the stream's leader answers a get: a STREAM.MSG.GET
// request, which no follower answers (a direct get may come from a follower that lags
// behind). ErrNotFound when there is none.
func leaderGet(ctx context.Context, js jetstream.JetStream, stream string, get msgGet) (*jetstream.RawStreamMsg, error) {
	req, err := json.Marshal(get)
	if err != nil {
		return nil, err
	}
	// A request lost in a leader election is asked again (Ask), each bounded as nats.go
	// bounds its own API requests: it would otherwise hold its caller (a reconcile and its
	// lease) for the caller's whole deadline, or forever.
	var resp *nats.Msg
	err = Ask(ctx, func(ctx context.Context) (err error) {
		ctx, cancel := context.WithTimeout(ctx, js.Options().DefaultTimeout)
		defer cancel()
		resp, err = untilAnswered(ctx, func() (*nats.Msg, error) { // the leader may not be known here yet
			return js.Conn().RequestWithContext(ctx, jsAPI+"STREAM.MSG.GET."+stream, req)
		})
		return err
	})
	if err != nil {
		return nil, err
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
		return nil, err
	}
	switch {
	case answer.Error != nil && answer.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, ErrNotFound
	case answer.Error != nil:
		return nil, answer.Error
	case answer.Message == nil:
		return nil, fmt.Errorf("%w: empty answer", ErrMalformed)
	}
	m := answer.Message
	raw := &jetstream.RawStreamMsg{Subject: m.Subject, Sequence: m.Seq, Data: m.Data}
	if len(m.Header) > 0 {
		if raw.Header, err = nats.DecodeHeadersMsg(m.Header); err != nil {
			return nil, fmt.Errorf("%w: headers: %v", ErrMalformed, err)
		}
	}
	raw.Time, _ = time.Parse(time.RFC3339Nano, m.Time) // only informative: a zero time is harmless
	return raw, nil
}
