package events_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// The bucket can be opened again, and a claimed address cannot be claimed twice.
func TestIPAMClaimsOnce(t *testing.T) {
	js, _ := eventstest.Connect(t, eventstest.Server(t))
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(t.Context(), "10.0.0.2", []byte("vm-a/eth0")); err != nil {
		t.Fatal(err)
	}
	again, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatalf("opening the bucket again: %v", err)
	}
	if _, err := again.Create(t.Context(), "10.0.0.2", []byte("vm-b/eth0")); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Errorf("second claim: err = %v, want ErrKeyExists", err)
	}
}
