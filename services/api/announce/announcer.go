// Package announce publishes on EVENTS, as CloudEvents for outside systems, what happens
// to VirtualMachines, following the read model's change stream.
package announce

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api/readmodel"
)

// vmPlural is the kind whose life the announcer publishes.
const vmPlural = "virtualmachines"

// Publishing: a failed publish (NATS unreachable) is retried after a growing delay; an
// event no retry can publish is recorded and skipped (see unpublishable).
const (
	announceRetryMin = 100 * time.Millisecond
	announceRetryMax = 5 * time.Second
	// announcePublishTimeout bounds one publish attempt, also when the gateway stops.
	announcePublishTimeout = 5 * time.Second
)

// Changes is the read model as the announcer follows it.
type Changes interface {
	WaitCaughtUp(ctx context.Context) error
	Epoch() string
	Watch(ctx context.Context, o readmodel.WatchOptions) (<-chan readmodel.Change, error)
}

// announcer publishes on EVENTS, as CloudEvents for outside systems, what happens to
// VirtualMachines: it follows the read model's change stream and compares each object
// with what it announced about it before (see [announce]).
//
// It announces every change at least once and, in practice, once: its cursor and
// announced facts are saved after each change's events are acknowledged, so a restart
// resumes after the last change it finished; a crash between the publish and the save
// repeats the publish with the same deterministic id, which JetStream's duplicate
// window drops, as it drops the same events published by another gateway replica.
type announcer struct {
	js    jetstream.JetStream
	rm    Changes
	state *announcerState
	log   *slog.Logger

	cursor string                // resourceVersion announced up to; "" = compare with the current state
	facts  map[string]*announced // by "namespace/name"
	// adopt: the state is new (a new replica, or a lost file), so the current objects are
	// taken as announced, not announced again, and only what changes from then on is.
	adopt bool
}

// Start runs the announcer until ctx ends, keeping its state in dataDir; a failure to keep
// its state cancels the gateway with that cause. The returned func cancels it and waits
// until it stopped.
func Start(ctx context.Context, cancel context.CancelCauseFunc, js jetstream.JetStream, rm Changes, dataDir string, log *slog.Logger) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runAnnouncer(ctx, js, rm, filepath.Join(dataDir, "announcer.db"), log); err != nil {
			cancel(fmt.Errorf("announce virtual machine events: %w", err))
		}
	}()
	return func() {
		cancel(nil)
		<-done
	}
}

func runAnnouncer(ctx context.Context, js jetstream.JetStream, rm Changes, path string, log *slog.Logger) error {
	state, err := openAnnouncerState(path)
	if err != nil {
		return err
	}
	defer state.Close()
	cursor, epoch, facts, err := state.load()
	if err != nil {
		return err
	}
	// Once caught up, the read model has checked its history against the streams (and
	// rebuilt itself if they diverged), and what a resync compares with is the streams'.
	if err := rm.WaitCaughtUp(ctx); err != nil {
		return nil
	}
	state.epoch = rm.Epoch()
	// Only a state that never saved a cursor is new: one whose cursor is of another epoch
	// announced what it holds in facts, and nothing else, however few they are.
	adopt := cursor == "" && len(facts) == 0
	if cursor != "" && epoch != state.epoch {
		// The cursor is a position in another history of the read model (a new file, or
		// a rebuild after the streams diverged): resuming from it could replay or skip.
		log.Warn("announcer cursor belongs to another read model history: announcing the difference to the current state",
			"cursor", cursor)
		cursor = ""
	}
	a := &announcer{js: js, rm: rm, state: state, log: log, cursor: cursor, facts: facts, adopt: adopt}
	return a.run(ctx)
}

// run watches from the cursor, again whenever the read model ends a watch (a slow
// watcher is dropped). Without a cursor — a new state, a cursor of another read model
// epoch, or one the change log no longer reaches back to — it compares the current
// objects with what it announced and announces the difference (a new state adopts them
// instead), then follows from there.
func (a *announcer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		opts := readmodel.WatchOptions{Plural: vmPlural, FromRV: a.cursor}
		resync := a.cursor == ""
		if resync {
			opts.SendInitial, opts.InitialEventsEnd = true, true
		}
		changes, err := a.rm.Watch(ctx, opts)
		switch {
		case errors.Is(err, readmodel.ErrGone):
			a.log.Warn("announcer cursor older than the change log: announcing the difference to the current state", "cursor", a.cursor)
			a.cursor = ""
			continue
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("watch %s: %w", vmPlural, err)
		}
		if err := a.follow(ctx, changes, resync); err != nil {
			if ctx.Err() != nil {
				return nil // stopped in the middle of a change: it is announced again on restart
			}
			return err
		}
	}
	return nil
}

// follow announces the changes of one watch. With resync, the watch starts with the
// current objects and a bookmark; what was announced but is not among them is gone.
func (a *announcer) follow(ctx context.Context, changes <-chan readmodel.Change, resync bool) error {
	var present map[string]bool // the current objects, while resyncing
	if resync {
		present = map[string]bool{}
	}
	for c := range changes {
		if c.Type == readmodel.Bookmark {
			if err := a.announceGone(ctx, present); err != nil {
				return err
			}
			// Until here the cursor stays unsaved: a restart during the initial objects
			// must compare them again, not resume after the last one.
			a.cursor, resync, present, a.adopt = c.RV, false, nil, false
			if err := a.state.saveCursor(a.cursor); err != nil {
				return err
			}
			continue
		}
		key, err := a.handle(ctx, c, !resync)
		if err != nil {
			return err
		}
		if resync {
			present[key] = true
		}
	}
	return nil
}

// handle publishes the events of one change, then saves what is announced and, with
// advance, moves the cursor past the change.
func (a *announcer) handle(ctx context.Context, c readmodel.Change, advance bool) (key string, err error) {
	vm, err := decodeVMChange(c.Object)
	if err != nil {
		a.log.Error("announcer skips a change it cannot read", "rv", c.RV, "err", err)
		return "", nil
	}
	ref := events.Ref{Plural: vmPlural, Namespace: vm.Metadata.Namespace, Name: vm.Metadata.Name}
	key = ref.Namespace + "/" + ref.Name
	next, anns, err := announce(a.facts[key], c.Type, vm, c.Object)
	if err != nil {
		a.log.Error("announcer skips a change it cannot read", "object", ref, "rv", c.RV, "err", err)
		return key, nil
	}
	if a.adopt && !advance {
		anns = nil // an initial object of a new state: known, not news
	}
	for _, an := range anns {
		if err := a.publish(ctx, ref, an); err != nil {
			return key, err
		}
	}
	cursor := ""
	if advance {
		a.cursor = c.RV // a logged change's: exactly where the watch resumes after it
		cursor = a.cursor
	}
	if !advance && len(anns) == 0 && sameFacts(a.facts[key], next) {
		return key, nil // nothing to remember
	}
	if err := a.state.save(ref.Namespace, ref.Name, next, cursor); err != nil {
		return key, err
	}
	if next == nil {
		delete(a.facts, key)
	} else {
		a.facts[key] = next
	}
	return key, nil
}

// announceGone announces the deletion of every VM announced but no longer present.
func (a *announcer) announceGone(ctx context.Context, present map[string]bool) error {
	for key, f := range a.facts {
		if present[key] {
			continue
		}
		namespace, name, _ := strings.Cut(key, "/")
		ref := events.Ref{Plural: vmPlural, Namespace: namespace, Name: name}
		if err := a.publish(ctx, ref, goneAnnouncement(namespace, name, f.UID)); err != nil {
			return err
		}
		if err := a.state.save(namespace, name, nil, ""); err != nil {
			return err
		}
		delete(a.facts, key)
	}
	return nil
}

// publish publishes one event, retrying until it is stored or ctx ends. An attempt under
// way when ctx ends is finished (within announcePublishTimeout), so a gateway that stops
// completes the change at hand instead of announcing it again when it starts; when
// attempts fail and ctx ends, publish returns ctx's error and the change is not saved.
func (a *announcer) publish(ctx context.Context, ref events.Ref, an announcement) error {
	delay := announceRetryMin
	for {
		attempt, cancel := context.WithTimeout(context.WithoutCancel(ctx), announcePublishTimeout)
		err := events.PublishEvent(attempt, a.js, ref, an.Type, an.ID, an.Data)
		cancel()
		switch {
		case err == nil:
			return nil
		case unpublishable(err):
			return a.skip(ref, an, err)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		a.log.Warn("announcer publish failed; retrying", "object", ref, "type", an.Type, "err", err, "in", delay)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, announceRetryMax)
	}
}

// unpublishable tells a poison event, which no retry can publish, from a refusal that
// passes (NATS unreachable, the account's limits reached, a stream an operator must
// mend): it cannot be spelled as a subject, it is larger than a NATS message, or larger
// than the stream allows one message to be.
func unpublishable(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, events.ErrInvalidRef) || errors.Is(err, nats.ErrMaxPayload) ||
		errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
}

// skip records a poison event in the announcer's state (table skipped) and logs it, so
// that one event never stops the feed for everyone.
func (a *announcer) skip(ref events.Ref, an announcement, cause error) error {
	a.log.Error("announcer skips an event it cannot publish", "object", ref, "type", an.Type, "id", an.ID, "err", cause)
	return a.state.recordSkipped(ref, an.Type, an.ID, cause)
}

func sameFacts(a, b *announced) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.Generation == b.Generation && a.Deleting == b.Deleting &&
		maps.Equal(a.DeleteChecks, b.DeleteChecks) && maps.Equal(a.Conditions, b.Conditions)
}
