// Package eventstest runs a real NATS server with JetStream inside a test,
// so tests of code using package events need neither mocks nor Docker.
package eventstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

const startTimeout = 10 * time.Second

// Server starts an in-process NATS server with JetStream on a random
// loopback port, storing in a temporary directory. It is shut down when the
// test ends.
func Server(t testing.TB) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("new nats server: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(startTimeout) {
		t.Fatalf("nats server not ready within %v", startTimeout)
	}
	return s
}

// Connect opens a connection to s, closed when the test ends. Call it again
// for a second client, e.g. another replica of a service.
func Connect(t testing.TB, s *server.Server) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	return connectURL(t, s.ClientURL())
}

// Reconnect opens another connection to the server js is connected to, closed when the
// test ends: another replica's, beside the test's own.
func Reconnect(t testing.TB, js jetstream.JetStream) jetstream.JetStream {
	t.Helper()
	other, _ := connectURL(t, js.Conn().ConnectedUrl())
	return other
}

func connectURL(t testing.TB, url string) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect to nats: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js, nc
}

// JetStream starts a [Server], connects to it and creates vmop's streams
// with [events.Setup].
func JetStream(t testing.TB) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	js, nc := Connect(t, Server(t))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := events.Setup(ctx, js); err != nil {
		t.Fatalf("set up streams: %v", err)
	}
	return js, nc
}
