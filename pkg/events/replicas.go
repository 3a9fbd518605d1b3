package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureBucket creates or updates a key-value bucket. Its replicas follow SPECS's (the
// operator sets them once, for the streams, at Setup), and like a stream's are never
// lowered: a part starting with the default never shrinks a replicated bucket.
func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	replicas, err := streamReplicas(ctx, js, StreamSpecs)
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: %w", cfg.Bucket, err)
	}
	have, err := streamReplicas(ctx, js, kvStream+cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: %w", cfg.Bucket, err)
	}
	cfg.Replicas = max(cfg.Replicas, replicas, have)
	kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// streamReplicas is a stream's number of replicas, 0 when it does not exist.
func streamReplicas(ctx context.Context, js jetstream.JetStream, stream string) (int, error) {
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return s.CachedInfo().Config.Replicas, nil
}
