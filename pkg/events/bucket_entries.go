package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// kvOperationHeader marks a key-value bucket's delete and purge markers (nats.go's, not
// exported); a value put carries none.
const kvOperationHeader = "KV-Operation"

// BucketEntry is a key's value in a key-value bucket, its revision and when it was written.
type BucketEntry struct {
	Value    []byte
	Revision uint64
	Written  time.Time
}

// BucketEntries reads every key of a bucket whose history is one value per key (as the
// IPAM bucket's), from its stream (readForward): a service identity may read its buckets
// so, not list their keys (that takes a consumer). Deleted keys are left out.
func BucketEntries(ctx context.Context, js jetstream.JetStream, bucket string) (map[string]BucketEntry, error) {
	stream, prefix := kvStream+bucket, kvSubject+bucket+"."
	out := map[string]BucketEntry{}
	err := readForward(ctx, js, stream, prefix+">", 1, func(raw *jetstream.RawStreamMsg) {
		key := strings.TrimPrefix(raw.Subject, prefix)
		if raw.Header.Get(kvOperationHeader) != "" {
			delete(out, key) // a delete or purge marker
			return
		}
		out[key] = BucketEntry{Value: raw.Data, Revision: raw.Sequence, Written: raw.Time}
	})
	if err != nil {
		return nil, fmt.Errorf("read bucket %s: %w", bucket, err)
	}
	return out, nil
}
