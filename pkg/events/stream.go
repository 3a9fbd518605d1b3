package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	StreamSpecs      = "SPECS"      // desired state: one subject per object
	StreamStatus     = "STATUS"     // observed state: one subject per object and service
	StreamEvents     = "EVENTS"     // CloudEvents for outside systems
	StreamDeadLetter = "DEADLETTER" // advisories of terminated and exhausted messages
)

const (
	specHistory    = 8                   // SPECS keeps this many records per object
	dedupWindow    = 2 * time.Minute     // Nats-Msg-Id deduplication window
	eventsMaxAge   = 7 * 24 * time.Hour  // outside systems must read EVENTS within a week
	deadLetterAge  = 30 * 24 * time.Hour // long enough for a human to look
	advisoryPrefix = "$JS.EVENT.ADVISORY.CONSUMER."
	durablePrefix  = "vmop-"
)

// Byte limits. SPECS and STATUS refuse a write when full (DiscardNew): dropping their
// oldest messages would silently lose objects. EVENTS and DEADLETTER are feeds and drop
// their oldest instead. The embedded server reserves their sum on disk at start.
const (
	specsMaxBytes      = 1 << 30   // 1 GiB: 8 records of ~100,000 objects of a few KB
	statusMaxBytes     = 512 << 20 // 512 MiB: one slice per object and service
	eventsMaxBytes     = 1 << 30   // 1 GiB: a week of events
	deadLetterMaxBytes = 128 << 20 // 128 MiB of advisories
)

// Durable is the name of a service's durable consumer. A service has one per
// stream it reads, all with this name.
func Durable(service string) string { return durablePrefix + service }

// SetupOption changes how [Setup] configures the streams.
type SetupOption func(*setupOptions)

type setupOptions struct{ replicas int }

// WithReplicas sets the number of replicas of every stream (1 by default;
// 3 on a three-node cluster). A stream that has more keeps them: Setup never lowers
// what an operator set, so a part that starts with the default changes nothing.
func WithReplicas(n int) SetupOption {
	return func(o *setupOptions) { o.replicas = n }
}

// Setup creates the four streams, or updates them to the configuration in
// this package. It is idempotent; every program calls it at start.
func Setup(ctx context.Context, js jetstream.JetStream, opts ...SetupOption) error {
	o := setupOptions{replicas: 1}
	for _, opt := range opts {
		opt(&o)
	}
	for _, cfg := range streamConfigs(o.replicas) {
		if err := Ask(ctx, func(ctx context.Context) error { return ensureStream(ctx, js, cfg) }); err != nil {
			return fmt.Errorf("set up stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// ensureStream creates the stream, or updates it when its configuration differs from
// want. An update that changes nothing is skipped: nats-server applies it under another
// lock than consumer creation, so every service's start would race its peers' consumers.
func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return ensureStream(ctx, js, want) // a peer created it meanwhile
		}
		return err
	}
	if err != nil {
		return err
	}
	want.Replicas = max(want.Replicas, s.CachedInfo().Config.Replicas)
	if sameStreamConfig(s.CachedInfo().Config, want) {
		return nil
	}
	_, err = js.UpdateStream(ctx, want)
	return err
}

// sameStreamConfig compares the settings streamConfigs makes; the server fills in the
// rest (a zero Duplicates becomes its two-minute default, a zero MaxMsgsPerSubject -1).
func sameStreamConfig(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description &&
		slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention &&
		(have.MaxMsgsPerSubject == want.MaxMsgsPerSubject || want.MaxMsgsPerSubject == 0 && have.MaxMsgsPerSubject < 0) &&
		have.MaxAge == want.MaxAge &&
		have.Storage == want.Storage &&
		have.Replicas == want.Replicas &&
		(want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		have.AllowDirect == want.AllowDirect &&
		have.MaxBytes == want.MaxBytes &&
		have.Discard == want.Discard &&
		have.AllowRollup == want.AllowRollup
}

func streamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{
			Name:              StreamSpecs,
			Description:       "vmop desired state: one subject per object, the append is the change event",
			Subjects:          []string{SpecFilter("")},
			Retention:         jetstream.LimitsPolicy,
			MaxMsgsPerSubject: specHistory,
			MaxBytes:          specsMaxBytes,
			Discard:           jetstream.DiscardNew,
			Storage:           jetstream.FileStorage,
			Replicas:          replicas,
			Duplicates:        dedupWindow,
			AllowDirect:       true,
			AllowRollup:       true, // a tombstone rolls its object's history up (AppendSpec)
		},
		{
			Name:              StreamStatus,
			Description:       "vmop observed state: each service's whole status slice, newest per subject",
			Subjects:          []string{StatusFilter("")},
			Retention:         jetstream.LimitsPolicy,
			MaxMsgsPerSubject: 1,
			MaxBytes:          statusMaxBytes,
			Discard:           jetstream.DiscardNew,
			Storage:           jetstream.FileStorage,
			Replicas:          replicas,
			Duplicates:        dedupWindow,
			AllowDirect:       true,
		},
		{
			Name:        StreamEvents,
			Description: "vmop CloudEvents for outside systems",
			Subjects:    []string{join(subjectRoot, eventsToken, ">")},
			Retention:   jetstream.LimitsPolicy,
			MaxAge:      eventsMaxAge,
			MaxBytes:    eventsMaxBytes,
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
			Duplicates:  dedupWindow,
		},
		{
			Name:        StreamDeadLetter,
			Description: "advisories of messages that were terminated or exhausted their deliveries",
			// Terminations of SPECS messages only: the server terminates every STATUS
			// message still unacknowledged when a newer slice replaces it (STATUS keeps
			// one per subject), dozens per VM, none of them a failure. A handler's
			// termination of a STATUS message is logged instead (process).
			Subjects: []string{
				advisoryPrefix + "MAX_DELIVERIES.>",
				advisoryPrefix + "MSG_TERMINATED." + StreamSpecs + ".>",
			},
			Retention: jetstream.LimitsPolicy,
			MaxAge:    deadLetterAge,
			MaxBytes:  deadLetterMaxBytes,
			Storage:   jetstream.FileStorage,
			Replicas:  replicas,
		},
	}
}

// Subjects lists the subjects of a stream that match filter and hold a message: e.g.
// every object of a kind, for a resync.
func Subjects(ctx context.Context, js jetstream.JetStream, stream, filter string) ([]string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("subjects of %s matching %s: %w", stream, filter, err)
	}
	out := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		out = append(out, subj)
	}
	sort.Strings(out)
	return out, nil
}

// LastSeq is the sequence of the newest message of stream matching filter, 0 when none:
// how far a reader must have come to have seen everything written so far.
func LastSeq(ctx context.Context, js jetstream.JetStream, stream, filter string) (uint64, error) {
	raw, err := lastMsg(ctx, js, stream, filter)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("newest message of %s matching %s: %w", stream, filter, err)
	}
	return raw.Sequence, nil
}
