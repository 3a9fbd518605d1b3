package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// bucketEntriesBatch is how many messages one batched direct get of a bucket reads.
const bucketEntriesBatch = 512

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
// IPAM bucket's), by batched direct gets of its stream: a service identity may read its
// buckets so, not list their keys (that takes a consumer). Deleted keys are left out.
func BucketEntries(ctx context.Context, js jetstream.JetStream, bucket string) (map[string]BucketEntry, error) {
	stream, prefix := kvStream+bucket, kvSubject+bucket+"."
	out := map[string]BucketEntry{}
	for from := uint64(1); ; {
		msgs, err := jetstreamext.GetBatch(ctx, js, stream, bucketEntriesBatch,
			jetstreamext.GetBatchSeq(from), jetstreamext.GetBatchSubject(prefix+">"))
		if err != nil {
			return nil, fmt.Errorf("read bucket %s: %w", bucket, err)
		}
		read, pending := 0, ""
		for raw, err := range msgs {
			if errors.Is(err, jetstreamext.ErrNoMessages) {
				return out, nil
			}
			if err != nil {
				return nil, fmt.Errorf("read bucket %s: %w", bucket, err)
			}
			read++
			from, pending = raw.Sequence+1, raw.Header.Get(numPendingHeader)
			key := strings.TrimPrefix(raw.Subject, prefix)
			if raw.Header.Get(kvOperationHeader) != "" {
				delete(out, key) // a delete or purge marker
				continue
			}
			out[key] = BucketEntry{Value: raw.Data, Revision: raw.Sequence, Written: raw.Time}
		}
		n, err := strconv.ParseUint(pending, 10, 64)
		if err == nil && n == 0 || err != nil && read < bucketEntriesBatch {
			return out, nil
		}
	}
}
