package eventstest

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
)

// Lossy is a JetStream client whose API requests and KV writes pass through a gateway
// that asks lose about each: true drops the request (it never reaches the server), and
// a cleared reply lets it land with its answer going nowhere. It stands in for a
// clustered server that leaves requests unanswered while a group elects its leader.
// timeout is the client's JetStream timeout, after which a lost request fails.
func Lossy(t testing.TB, s *server.Server, timeout time.Duration, lose func(subject string, m *nats.Msg, reply *string) bool) jetstream.JetStream {
	t.Helper()
	_, gateway := Connect(t, s)
	if _, err := gateway.Subscribe("lossy.>", func(m *nats.Msg) {
		subject := strings.TrimPrefix(m.Subject, "lossy.")
		if !strings.HasPrefix(subject, "$KV.") {
			subject = "$JS.API." + subject
		}
		reply := m.Reply
		if lose(subject, m, &reply) {
			return
		}
		_ = gateway.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Header: m.Header, Data: m.Data})
	}); err != nil {
		t.Fatal(err)
	}
	if err := gateway.Flush(); err != nil {
		t.Fatal(err)
	}
	_, nc := Connect(t, s)
	js, err := jetstream.NewWithAPIPrefix(nc, "lossy", jetstream.WithDefaultTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// RecreatedConsumer reports whether subject asks to recreate an ordered consumer of stream
// (of any stream when ""), as one does after losing its server: the subject is
// $JS.API.CONSUMER.CREATE.<stream>.<name>[.<filter>], and the name ends in _1 when the
// consumer is created, _2 … when it recreates itself.
func RecreatedConsumer(subject, stream string) bool {
	tokens := strings.Split(subject, ".")
	return len(tokens) >= 6 && tokens[2] == "CONSUMER" && tokens[3] == "CREATE" &&
		(stream == "" || tokens[4] == stream) && !strings.HasSuffix(tokens[5], "_1")
}

// LosingRecreations starts a server with vmop's streams set up and returns a connection to
// it (admin) and one (js, requests timing out after timeout) on which every re-creation of
// an ordered consumer of stream ("" any) goes unanswered, as when the consumer's server was
// killed; lost counts them.
func LosingRecreations(t testing.TB, timeout time.Duration, stream string) (admin, js jetstream.JetStream, lost *atomic.Int32) {
	t.Helper()
	s := Server(t)
	admin, _ = Connect(t, s)
	if err := events.Setup(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	lost = new(atomic.Int32)
	js = Lossy(t, s, timeout, func(subject string, _ *nats.Msg, _ *string) bool {
		if !RecreatedConsumer(subject, stream) {
			return false
		}
		lost.Add(1)
		return true
	})
	return admin, js, lost
}

// DropConsumers deletes every consumer of stream, as a server that is lost takes those it
// held: an ordered consumer then recreates itself.
func DropConsumers(t testing.TB, js jetstream.JetStream, stream string) {
	t.Helper()
	st, err := js.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	names := st.ConsumerNames(t.Context())
	for name := range names.Name() {
		if err := st.DeleteConsumer(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
}
