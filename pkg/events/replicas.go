package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureBucket creates a key-value bucket, or updates it when its settings differ. Its
// replicas follow SPECS's (the operator sets them once, for the streams, at Setup), and
// like a stream's are never lowered: a part starting with the default never shrinks a
// replicated bucket. An update that changes nothing is skipped: replicas starting at
// once would otherwise race each other's create with their updates.
func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	replicas, err := streamReplicas(ctx, js, StreamSpecs)
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: %w", cfg.Bucket, err)
	}
	cfg.Replicas = max(cfg.Replicas, replicas, 1)
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			return ensureBucket(ctx, js, cfg) // a peer created it meanwhile
		}
		if err != nil {
			err = fmt.Errorf("create: %w", err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: %w", cfg.Bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("set up bucket %s: read its settings: %w", cfg.Bucket, err)
	}
	have := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config
	cfg.Replicas = max(cfg.Replicas, have.Replicas)
	if have.Replicas == cfg.Replicas && have.Description == cfg.Description && have.MaxMsgsPerSubject == int64(cfg.History) &&
		have.MaxAge == cfg.TTL && have.Storage == cfg.Storage {
		return kv, nil
	}
	if kv, err = js.UpdateKeyValue(ctx, cfg); err != nil {
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
