package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// Any number of replicas of a service may run. While one reconciles an object it holds
// the object's lease, a key in the service's lease bucket (events.LeaseBucket) naming
// the replica: taken by a compare-and-swap only when absent or free, renewed every
// LeaseTTL/3 with a compare-and-swap on its revision, set free (an empty value) when the
// reconcile ends, expiring LeaseTTL after a dead holder's last renewal. So at most one
// replica acts on an object at a time. A holder that cannot renew in time takes its
// lease as lost and publishes nothing more; the status fence (events.FenceStatus)
// refuses a slice it published meanwhile once another replica's is there.
//
// A replica remembers the revision of each lease it freed: its next reconcile of the
// object takes the lease back with one update at that revision (nobody wrote the key
// since), so a reconcile costs two requests, the take and the release.

// errLeaseLost fails a reconcile whose lease could not be renewed in time.
var errLeaseLost = errors.New("the object's lease was lost")

// Waiting for a lease another replica holds: polled with a growing interval, since the
// holder's reconcile usually ends within milliseconds.
const (
	leaseFirstPoll = 5 * time.Millisecond
	leaseMaxPoll   = 250 * time.Millisecond
)

// leaseSet is one process's leases of one service. Reconciles of one object within the
// process share its lease (their order is the object lock's business, see Trigger).
type leaseSet struct {
	js      jetstream.JetStream
	service string
	holder  string

	opening sync.Mutex
	kv      jetstream.KeyValue // nil until opened

	mu   sync.Mutex
	held map[string]*lease
	// freed are the revisions of the free values this process wrote, by key: the
	// expected revision of its next take. Entries older than LeaseTTL are dropped, since
	// the key expired by then, when freed grows past freedPruneAt.
	freed        map[string]freed
	freedPruneAt int
	// left are the keys a stopping holder left to expire (release), by when: this
	// process does not take them back before they expired either.
	left map[string]time.Time
}

// freed is a free value this process wrote and when.
type freed struct {
	rev uint64
	at  time.Time
}

// freedPrune is the size of leaseSet.freed below which it is never pruned.
const freedPrune = 1024

type lease struct {
	users int
	ready chan struct{} // closed once taken or failed
	err   error
	// stopped: a user's work failed once the replica was stopping (release): the lease
	// is left to expire, whichever user is the last.
	stopped bool
	rev     uint64             // owned by the renewer while it runs
	lost    context.Context    // cancelled when a renewal fails for LeaseTTL
	stop    context.CancelFunc // stops the renewer
	done    chan struct{}      // closed when the renewer returned
}

type leaseSetKey struct {
	js      jetstream.JetStream
	service string
}

// leaseSets are the process's lease sets by connection and service: a service's loops
// and its Trigger share one, whoever asks first.
var leaseSets sync.Map // leaseSetKey → *leaseSet

func leasesOf(js jetstream.JetStream, service string) *leaseSet {
	k := leaseSetKey{js, service}
	if s, ok := leaseSets.Load(k); ok {
		return s.(*leaseSet)
	}
	s, _ := leaseSets.LoadOrStore(k, &leaseSet{js: js, service: service, holder: replicaID(), held: map[string]*lease{}, freed: map[string]freed{},
		left: map[string]time.Time{}})
	return s.(*leaseSet)
}

// replicaID names this process in leases: host, pid and a random part, unique even
// when a restarted replica reuses its pid.
func replicaID() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// bucket opens the lease bucket on first use; a failure is tried again by the next.
// Every reconcile of the process waits for it: an unanswered request is asked again
// (events.Ask) rather than waited on for the caller's deadline.
func (s *leaseSet) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	s.opening.Lock()
	defer s.opening.Unlock()
	if s.kv != nil {
		return s.kv, nil
	}
	err := events.Ask(ctx, func(ctx context.Context) (err error) {
		s.kv, err = events.Leases(ctx, s.js, s.service)
		return err
	})
	return s.kv, err
}

// hold runs f holding ref's lease. f gets the caller's ctx (services start work that
// outlives the reconcile with it, e.g. Trigger.RequestAt), not cancelled by a lost lease
// but carrying it: publish checks it (leaseHeld), whichever path publishes. freedAt
// tells f the revision of this process's free value the lease was taken back at (0: it
// was taken otherwise): nobody held it since that value was written, so nobody acted on
// the object since.
func (s *leaseSet) hold(ctx context.Context, ref events.Ref, f func(ctx context.Context, freedAt uint64) error) error {
	key := events.LeaseKey(ref)
	l, freedAt, err := s.acquire(ctx, key)
	if err != nil {
		return fmt.Errorf("lease of %s: %w", ref, err)
	}
	stopped := false
	defer func() { s.release(stopped, key, l) }()
	err = f(context.WithValue(ctx, heldLeaseKey{}, heldLease{ref: ref, lost: l.lost}), freedAt)
	stopped = err != nil && ctx.Err() != nil
	return err
}

type heldLeaseKey struct{}

type heldLease struct {
	ref  events.Ref
	lost context.Context
}

// leaseHeld is errLeaseLost once the lease ctx's reconcile holds could not be renewed in
// time; nil while it holds, or outside a lease.
func leaseHeld(ctx context.Context) error {
	h, ok := ctx.Value(heldLeaseKey{}).(heldLease)
	if ok && h.lost.Err() != nil {
		return fmt.Errorf("%s: %w", h.ref, errLeaseLost)
	}
	return nil
}

// acquire takes key's lease, or joins this process's holder of it; freedAt is the
// revision of the process's free value this call took it back at, 0 for none.
func (s *leaseSet) acquire(ctx context.Context, key string) (l *lease, freedAt uint64, err error) {
	s.mu.Lock()
	l = s.held[key]
	if l != nil {
		l.users++
		s.mu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			s.giveUp(key, l)
			return nil, 0, ctx.Err()
		}
		if l.err != nil {
			s.drop(key, l, false)
			return nil, 0, l.err
		}
		return l, 0, nil
	}
	l = &lease{users: 1, ready: make(chan struct{}), done: make(chan struct{})}
	s.held[key] = l
	s.mu.Unlock()
	var taken time.Time
	l.rev, taken, freedAt, l.err = s.take(ctx, key)
	if l.err != nil {
		close(l.ready)
		s.drop(key, l, false)
		return nil, 0, l.err
	}
	var lose context.CancelFunc
	l.lost, lose = context.WithCancel(context.Background())
	var renewing context.Context
	renewing, l.stop = context.WithCancel(context.Background())
	go s.renew(renewing, key, l, taken, lose)
	close(l.ready)
	return l, freedAt, nil
}

// take sets key to this replica's name, waiting while another replica holds it; it
// returns when the successful write was sent, which the entry's age on the server counts
// from. The key is taken at the revision of the free value this process wrote last, when
// it knows one, else by a create (absent key) or an update at the revision of a free
// value read. An unanswered create is tried again: if it landed, the key holds this
// replica's name, and the entry is reclaimed at its revision instead of waited out.
// freedAt is the revision of the process's own free value it was taken at, 0 for none.
func (s *leaseSet) take(ctx context.Context, key string) (rev uint64, sent time.Time, freedAt uint64, err error) {
	kv, err := s.bucket(ctx)
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	if freed, ok := s.lastFreed(key); ok {
		sent := time.Now()
		if rev, err := kv.Update(ctx, key, []byte(s.holder), freed); err == nil {
			return rev, sent, freed, nil
		}
		// Written since (another replica, an expiry) or unanswered: the general way reads it.
	}
	poll := leaseFirstPoll
	for {
		err := events.Ask(ctx, func(ctx context.Context) (err error) {
			sent = time.Now()
			rev, err = kv.Create(ctx, key, []byte(s.holder))
			return err
		})
		if !held(err) {
			return rev, sent, 0, err
		}
		if rev, sent, ok := s.reclaim(ctx, kv, key); ok {
			return rev, sent, 0, nil
		}
		select {
		case <-ctx.Done():
			return 0, time.Time{}, 0, ctx.Err()
		case <-time.After(poll):
		}
		poll = min(2*poll, leaseMaxPoll)
	}
}

// lastFreed is the revision of the free value this process wrote last to key, if it is
// recent enough to be there still.
func (s *leaseSet) lastFreed(key string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.freed[key]
	delete(s.freed, key) // whatever take finds, the value is not free afterwards
	return f.rev, ok && time.Since(f.at) < events.LeaseTTL
}

// freedAt is the revision of the free value this process wrote last to key, if it is
// recent enough to be there still; unlike lastFreed, it leaves the record for a take.
func (s *leaseSet) freedAt(key string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.freed[key]
	return f.rev, ok && time.Since(f.at) < events.LeaseTTL
}

// stillFree reports whether key's entry is still the free value written at rev: nobody
// took the lease since.
func (s *leaseSet) stillFree(ctx context.Context, key string, rev uint64) (bool, error) {
	kv, err := s.bucket(ctx)
	if err != nil {
		return false, err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil // expired: whoever comes next takes it anew
	}
	if err != nil {
		return false, fmt.Errorf("read lease %s: %w", key, err)
	}
	return e.Revision() == rev && len(e.Value()) == 0, nil
}

// rememberFreed records the revision of a free value written to key.
func (s *leaseSet) rememberFreed(key string, rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.freed[key] = freed{rev: rev, at: now}
	if len(s.freed) < max(s.freedPruneAt, freedPrune) {
		return
	}
	for k, f := range s.freed {
		if now.Sub(f.at) >= events.LeaseTTL {
			delete(s.freed, k)
		}
	}
	s.freedPruneAt = 2 * len(s.freed) // many recent ones: not scanned again at every release
}

// reclaim takes key over when its entry is free, or names this replica: no lease of
// this process holds it (s.held admits one taker a key), so the entry is a create that
// landed unanswered, or a release that did not. The update at the entry's revision fails
// if another replica took the key meanwhile; any failure leaves take to wait as before.
func (s *leaseSet) reclaim(ctx context.Context, kv jetstream.KeyValue, key string) (uint64, time.Time, bool) {
	e, err := kv.Get(ctx, key)
	if err != nil || len(e.Value()) != 0 && (string(e.Value()) != s.holder || s.leftToExpire(key)) {
		return 0, time.Time{}, false
	}
	sent := time.Now()
	rev, err := kv.Update(ctx, key, []byte(s.holder), e.Revision())
	return rev, sent, err == nil
}

// leftToExpire reports whether a stopping holder of this process left key to expire
// less than LeaseTTL ago.
func (s *leaseSet) leftToExpire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.left[key]
	if ok && time.Since(at) >= events.LeaseTTL {
		delete(s.left, key)
		ok = false
	}
	return ok
}

// held reports whether a Create failed because the key exists. Create re-creates a
// deleted key at its delete marker's revision; losing that race to another replica
// comes back as the bare wrong-last-sequence error (10071, or 10164 when replicated).
func held(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// renew keeps the lease until stopped; it cancels lost when no renewal has landed for
// LeaseTTL, counted from when the last one that landed was sent (the entry's age on the
// server): the entry may have expired and another replica taken it. Until a failed
// renewal says so (at most a renewal timeout later), the status fence is the guard.
func (s *leaseSet) renew(ctx context.Context, key string, l *lease, renewed time.Time, lose context.CancelFunc) {
	defer close(l.done)
	every := events.LeaseTTL / 3
	t := time.NewTicker(every / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(renewed) < every {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		sent := time.Now()
		rev, err := s.kv.Update(rctx, key, []byte(s.holder), l.rev)
		cancel()
		switch {
		case err == nil:
			l.rev, renewed = rev, sent
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch), time.Since(renewed) >= events.LeaseTTL:
			lose() // another replica holds it now, or may
			return
		}
	}
}

// release gives the lease back once its last user in the process is done: it writes the
// key free at the lease's revision (a lost lease is not this replica's to free). A lease
// one of whose users' work failed once the replica was stopping is left to expire instead,
// as a crashed holder's is: a vCenter task its cancelled work started may still be running,
// and the next holder must not read the object before it lands. Work that succeeded has
// nothing running, even when the stop came before it returned (a reconcile that
// published its slice, cancelled on its way out): its lease is freed, stopping or not.
func (s *leaseSet) release(stopped bool, key string, l *lease) {
	if s.drop(key, l, stopped) {
		s.free(key, l)
	}
}

// giveUp counts out a user that joined l but will not use it (its ctx ended first). The
// users that released l meanwhile left its freeing to the next: when this one is the
// last, it frees l, or l's renewal would keep the object from every other replica.
func (s *leaseSet) giveUp(key string, l *lease) {
	if !s.drop(key, l, false) {
		return
	}
	<-l.ready // closed already: its taker counted as a user until it closed it
	if l.err == nil {
		s.free(key, l)
	}
}

// free ends l once its last user in the process is done (release).
func (s *leaseSet) free(key string, l *lease) {
	l.stop()
	<-l.done
	if l.lost.Err() != nil {
		return
	}
	if l.stopped {
		s.mu.Lock()
		s.left[key] = time.Now()
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), events.LeaseTTL)
	defer cancel()
	// A failed write only leaves the entry to expire.
	if rev, err := s.kv.Update(ctx, key, nil, l.rev); err == nil {
		s.rememberFreed(key, rev)
	}
}

// drop counts a user of l out, noting whether its work failed at a stop, and reports
// whether it was the last.
func (s *leaseSet) drop(key string, l *lease, stopped bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.stopped = l.stopped || stopped
	l.users--
	if l.users > 0 {
		return false
	}
	if s.held[key] == l {
		delete(s.held, key)
	}
	return true
}
