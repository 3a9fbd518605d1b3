package main

import (
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsAs connects to the NATS at url over TLS as one of the stack's identities (its
// credentials under data/nats), trusting the stack's CA beside them; a part's identity
// receives replies under its own inbox prefix only.
func natsAs(t *testing.T, url, data, identity string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	dir := filepath.Join(data, "nats")
	opts = append([]nats.Option{nats.UserCredentials(filepath.Join(dir, identity+".creds")), nats.RootCAs(filepath.Join(dir, "ca.crt"))}, opts...)
	if id, ok := roleIdentities()[identity]; ok {
		opts = append(opts, nats.CustomInboxPrefix(id.Inbox))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", identity, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
