package events

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// BucketIPAM is the key-value bucket in which the network service claims IP and MAC
// addresses: one key per address (e.g. "192.168.0.7", "00-50-56-0a-1b-2c"), whose value
// names the holder, and per VM a "held.<vm uid>" listing the addresses it claimed. Creating a key fails when it exists, so two reconciles (or two replicas)
// never hand out the same address, and a holder that finds its own claim after a crash
// keeps it.
const BucketIPAM = "vmop-ipam"

// IPAM opens the address bucket, creating or updating it first; opts are those of [Setup]
// (WithReplicas; by default it has as many replicas as SPECS).
func IPAM(ctx context.Context, js jetstream.JetStream, opts ...SetupOption) (jetstream.KeyValue, error) {
	o := setupOptions{replicas: 1}
	for _, opt := range opts {
		opt(&o)
	}
	return ensureBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:      BucketIPAM,
		Description: "vmop IP and MAC address claims of the network service: address -> holder",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    o.replicas,
	})
}
