package kubeevents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Retention is how long an Event is served after it happened. kube-apiserver keeps Events
// an hour (--event-ttl); vmop keeps them a day, so that describe still tells how a VM came
// to be the morning after, while the EVENTS stream keeps the full week for outside systems.
const Retention = 24 * time.Hour

// Errors of reads and watches.
var (
	// ErrInvalid: a malformed resourceVersion, continue token or field selector.
	ErrInvalid = errors.New("invalid request")
	// ErrGone: the resourceVersion is older than the Events kept.
	ErrGone = errors.New("resource version too old")
	// ErrNotFound: no such Event.
	ErrNotFound = errors.New("event not found")
)

// Store is the table of Events. Reads are safe for concurrent use; [Store.Fold] is its
// only writer.
type Store struct {
	writer *sqlx.DB
	reader *sqlx.DB
	log    *slog.Logger

	mu       sync.Mutex
	applied  uint64        // the last EVENTS sequence folded
	pruned   uint64        // every Event up to this sequence is gone (retention, or before the fold's start)
	started  bool          // the fold knows where it started: pruned is set
	advanced chan struct{} // closed (and replaced) when applied advances
	subs     map[*subscription]struct{}
	closed   bool
}

const schema = `
DROP TABLE IF EXISTS events;
CREATE TABLE events (
	seq         INTEGER PRIMARY KEY, -- EVENTS sequence: the Event's resourceVersion
	namespace   TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	kind        TEXT    NOT NULL,    -- involvedObject.kind
	api_version TEXT    NOT NULL,    -- involvedObject.apiVersion
	object_name TEXT    NOT NULL,    -- involvedObject.name
	object_uid  TEXT    NOT NULL,    -- involvedObject.uid
	reason      TEXT    NOT NULL,
	type        TEXT    NOT NULL,
	source      TEXT    NOT NULL,    -- source.component
	stored      INTEGER NOT NULL,    -- when JetStream stored it (Unix ns): retention
	event       BLOB    NOT NULL     -- the v1 Event's JSON
);
CREATE INDEX events_by_namespace ON events (namespace, seq);
CREATE INDEX events_by_object ON events (namespace, object_name, seq);
CREATE INDEX events_by_stored ON events (stored);
`

// Open creates the Events table at path anew (see the package documentation).
func Open(path string, log *slog.Logger) (*Store, error) {
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	writer, err := sqlx.Open("sqlite3", uri+"?_journal_mode=WAL&_synchronous=OFF&_busy_timeout=5000&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open events %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	if _, err := writer.Exec(schema); err != nil {
		writer.Close()
		return nil, fmt.Errorf("create events table in %s: %w", path, err)
	}
	reader, err := sqlx.Open("sqlite3", uri+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open events %s: %w", path, err)
	}
	reader.SetMaxOpenConns(4)
	return &Store{writer: writer, reader: reader, log: log, advanced: make(chan struct{}), subs: map[*subscription]struct{}{}}, nil
}

// Close ends every watch and closes the table. Stop [Store.Fold] first.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	for sub := range s.subs {
		delete(s.subs, sub)
		close(sub.ch)
	}
	s.mu.Unlock()
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// position is what the fold has reached: applied, and the horizon below which Events are gone.
func (s *Store) position() (applied, pruned uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied, s.pruned
}

// RV is the resourceVersion of a list read now: the last sequence folded.
func (s *Store) RV() string {
	applied, _ := s.position()
	return fmt.Sprint(applied)
}

// waitApplied blocks until the fold has applied seq, or ctx ends.
func (s *Store) waitApplied(ctx context.Context, seq uint64) error {
	for {
		s.mu.Lock()
		done, ch := s.started && s.applied >= seq, s.advanced
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
