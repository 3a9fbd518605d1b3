package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// lastSpecsPerRequest is how many subjects one batched direct get asks for: a server
// answers at most 1,024 of them at once.
const lastSpecsPerRequest = 1024

// numPendingHeader is how many messages of a batched direct get follow this one.
const numPendingHeader = "Nats-Num-Pending"

// LastSpecsOf reads the newest records of refs in a few requests (JetStream's batched
// direct get), where LastSpec costs a round trip each: what a decision over a whole
// namespace reads. A ref that never existed is left out; a deleted one's tombstone is in.
func LastSpecsOf(ctx context.Context, js jetstream.JetStream, refs []Ref) (map[Ref]SpecRecord, error) {
	out := make(map[Ref]SpecRecord, len(refs))
	for chunk := range slices.Chunk(refs, lastSpecsPerRequest) {
		subjects := make([]string, len(chunk))
		for i, ref := range chunk {
			if err := ref.Validate(); err != nil {
				return nil, fmt.Errorf("read specs: %w", err)
			}
			subjects[i] = SpecSubject(ref)
		}
		complete, err := lastSpecsBatch(ctx, js, subjects, out)
		if err != nil {
			return nil, fmt.Errorf("read %d specs: %w", len(chunk), err)
		}
		if complete {
			continue
		}
		// The server stops a batch at its pending-bytes limit: the rest one by one.
		for _, ref := range chunk {
			if _, ok := out[ref]; ok {
				continue
			}
			rec, err := LastSpec(ctx, js, ref)
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				return nil, err
			default:
				out[ref] = rec
			}
		}
	}
	return out, nil
}

// lastSpecsBatch adds to out the newest records of subjects, from one batched direct get;
// complete is false when the server left some out.
func lastSpecsBatch(ctx context.Context, js jetstream.JetStream, subjects []string, out map[Ref]SpecRecord) (complete bool, err error) {
	msgs, err := jetstreamext.GetLastMsgsFor(ctx, js, StreamSpecs, subjects)
	if err != nil {
		return false, err
	}
	pending := "0"
	for raw, err := range msgs {
		if errors.Is(err, jetstreamext.ErrNoMessages) {
			return true, nil // none of them exists
		}
		if err != nil {
			return false, err
		}
		rec, err := ParseRawSpecMsg(raw)
		if err != nil {
			return false, err
		}
		out[rec.Ref] = rec
		pending = raw.Header.Get(numPendingHeader)
	}
	n, err := strconv.ParseUint(pending, 10, 64)
	return err == nil && n == 0, nil
}

// LastSpecsEverywhere reads the newest record of every object of plural in every
// namespace, in the order of their subjects, tombstones included: what a decision over a
// resource that VMs of every namespace share reads (a host's local datastore).
func LastSpecsEverywhere(ctx context.Context, js jetstream.JetStream, plural string) ([]SpecRecord, error) {
	return lastSpecsMatching(ctx, js, SpecFilter(plural), plural)
}

func lastSpecsMatching(ctx context.Context, js jetstream.JetStream, filter, what string) ([]SpecRecord, error) {
	subjects, err := Subjects(ctx, js, StreamSpecs, filter)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	refs := make([]Ref, 0, len(subjects))
	for _, subj := range subjects {
		if ref, err := ParseSpecSubject(subj); err == nil {
			refs = append(refs, ref)
		}
	}
	recs, err := LastSpecsOf(ctx, js, refs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	out := make([]SpecRecord, 0, len(recs))
	for _, ref := range refs {
		if rec, ok := recs[ref]; ok {
			out = append(out, rec)
		}
	}
	return out, nil
}
