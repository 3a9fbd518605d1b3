package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// sweepEvery is how often a replica looks for claims that no VM holds any more.
const sweepEvery = 10 * time.Minute

// sweepAfter is how old a VM's newest claim or record must be for the sweep to release its
// claims: far more than a NATS replica that answers a read lags behind, so that a VM just
// created, which such a replica may not show yet, never looks gone.
const sweepAfter = time.Minute

// A VM's deletion releases its claims (release), found through its record. A reconcile
// of the VM that lost its lease meanwhile (a replica cut off from NATS, then back) may
// still land a claim after that release read the record, or a record entry after it
// deleted the record: nothing would ever release those, and the address would be lost
// to the pool. The sweep releases the claims and records of every VM uid that no VM
// object has any more. It reads the bucket before the VMs: a VM's object exists before
// any claim of it is made, so a uid missing from the later read is a VM gone for good
// (unless the read came from a lagging replica: so only claims older than sweepAfter go).

// sweepPeriodically runs sweep at start and every sweepEvery until ctx ends; failures are
// logged and left to the next round.
func (a *allocator) sweepPeriodically(ctx context.Context, js jetstream.JetStream, log *slog.Logger) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		if n, err := a.sweep(ctx, js, time.Now().Add(-sweepAfter)); err != nil && ctx.Err() == nil {
			log.Warn("network: releasing the claims of deleted VMs", "err", err)
		} else if n > 0 {
			log.Info("network: released the claims of deleted VMs", "claims", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweep releases the claims and records of VM uids no VirtualMachine has, those of a uid
// with a key written after before aside; it returns how many keys it removed.
func (a *allocator) sweep(ctx context.Context, js jetstream.JetStream, before time.Time) (int, error) {
	entries, err := events.BucketEntries(ctx, js, events.BucketIPAM)
	if err != nil {
		return 0, err
	}
	byUID := map[string]map[string]uint64{} // uid → its keys → revision
	recent := map[string]bool{}             // uids with a key written after before
	for key, e := range entries {
		uid, ok := strings.CutPrefix(key, heldPrefix)
		if !ok {
			uid, _, ok = strings.Cut(string(e.Value), "/")
		}
		if !ok || uid == "" {
			continue
		}
		if byUID[uid] == nil {
			byUID[uid] = map[string]uint64{}
		}
		byUID[uid][key] = e.Revision
		recent[uid] = recent[uid] || e.Written.After(before)
	}
	if len(byUID) == 0 {
		return 0, nil
	}
	live, err := liveVMs(ctx, js)
	if err != nil {
		return 0, err
	}
	removed := 0
	for uid, keys := range byUID {
		if live[uid] || recent[uid] {
			continue
		}
		for key, rev := range keys { // the record last: a claim is never left without it
			if key == heldKey(uid) {
				continue
			}
			if err := a.drop(ctx, key, rev, &removed); err != nil {
				return removed, err
			}
		}
		if rev, ok := keys[heldKey(uid)]; ok {
			if err := a.drop(ctx, heldKey(uid), rev, &removed); err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

// drop deletes key at revision rev, counting it in removed; a key changed since (claimed
// anew) is left.
func (a *allocator) drop(ctx context.Context, key string, rev uint64, removed *int) error {
	err := a.kv.Delete(ctx, key, jetstream.LastRevision(rev))
	switch {
	case err == nil:
		*removed++
	case !errors.Is(err, jetstream.ErrKeyNotFound) && !isWrongRevision(err):
		return fmt.Errorf("release %s: %w", key, err)
	}
	return nil
}

// liveVMs are the uids of the VirtualMachines that exist, being deleted or not. A record
// it cannot read fails it: its VM's claims must not look abandoned.
func liveVMs(ctx context.Context, js jetstream.JetStream) (map[string]bool, error) {
	recs, err := events.LastSpecsEverywhere(ctx, js, "virtualmachines")
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(recs))
	for _, rec := range recs {
		if rec.Op != events.OpPut {
			continue
		}
		var head struct {
			Metadata struct{ UID string }
		}
		if err := json.Unmarshal(rec.Body, &head); err != nil || head.Metadata.UID == "" {
			return nil, fmt.Errorf("read the uid of %s: %v", rec.Ref, err)
		}
		live[head.Metadata.UID] = true
	}
	return live, nil
}
