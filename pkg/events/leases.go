package events

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LeaseTTL is how long an object's lease outlives its holder's last renewal: a replica
// that dies holding one delays that object's next reconcile by at most this much.
const LeaseTTL = 10 * time.Second

// LeaseBucket is the key-value bucket of a service's object leases: while one of its
// replicas reconciles an object, the object's key names that replica, so no other one
// acts on it meanwhile.
func LeaseBucket(service string) string { return "vmop-leases-" + service }

// LeaseKey is an object's key in a lease bucket: <plural>.<ns>.<name>.
func LeaseKey(r Ref) string {
	return join(r.Plural, EncodeToken(r.Namespace), EncodeToken(r.Name))
}

// Leases opens service's lease bucket, creating or updating it first. Its entries expire
// LeaseTTL after their last write; they live in memory (a lease means nothing after the
// whole cluster restarted), replicated like SPECS.
func Leases(ctx context.Context, js jetstream.JetStream, service string) (jetstream.KeyValue, error) {
	return ensureBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:      LeaseBucket(service),
		Description: "vmop object leases of the " + service + " service: object -> the replica reconciling it",
		History:     1,
		TTL:         LeaseTTL,
		Storage:     jetstream.MemoryStorage,
	})
}

// ScopeLeaseKey is the key of a scope lease in a lease bucket: a decision spanning objects
// (placement's choices in a namespace, a CNS volume's attachment) held by one replica at a
// time. Its first token, scopes, is no plural, so it never names an object's lease.
func ScopeLeaseKey(kind, name string) string {
	return join("scopes", kind, EncodeToken(name))
}
