package readmodel

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Store is the SQLite read model. Reads are safe for concurrent use; [Store.Fold] is its
// only writer and runs at most once at a time.
type Store struct {
	writer *sqlx.DB // exactly one connection: SQLite has one writer anyway, and Fold owns it
	reader *sqlx.DB // read-only pool; WAL lets it read while the fold writes
	opts   options

	progress  progress
	cache     cache
	hub       hub
	folding   atomic.Bool
	following atomic.Bool // Fold has its feeds open
	epoch     atomic.Pointer[string]
}

// Epoch names the history this projection was folded from. It changes when the projection
// starts over: a new file, or a rebuild because the streams no longer hold what it folded
// (see [Store.Fold]). A resourceVersion kept from another epoch may point into another
// history; one kept within an epoch stays valid, also across restarts. Fold settles it
// before it catches up: read it once [Store.CaughtUp] holds.
func (s *Store) Epoch() string { return *s.epoch.Load() }

// Option configures [Open].
type Option func(*options)

type options struct {
	changeLogSize int
	watchBuffer   int
	logger        *slog.Logger
}

// WithChangeLogSize bounds the change log kept for watch resumption to the newest n
// changes (default 10000). A watch resuming from before the kept window fails with [ErrGone].
func WithChangeLogSize(n int) Option {
	return func(o *options) { o.changeLogSize = max(n, 1) }
}

// WithWatchBuffer sets how many changes a watcher may fall behind before its channel is
// closed (default 1024).
func WithWatchBuffer(n int) Option {
	return func(o *options) { o.watchBuffer = max(n, 1) }
}

// WithLogger sets where the fold reports messages it skips because they cannot be decoded
// (default [slog.Default]).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// Open opens (creating if absent) the read model database at path. The file is a
// projection: deleting it and folding again rebuilds identical objects.
func Open(path string, opt ...Option) (*Store, error) {
	o := options{changeLogSize: 10000, watchBuffer: 1024, logger: slog.Default()}
	for _, f := range opt {
		f(&o)
	}
	uri := "file:" + escapeURIPath(path)
	writer, err := sqlx.Open("sqlite3", uri+
		"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate&_stmt_cache_size=32")
	if err != nil {
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	if err := migrate(writer, o.logger); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	reader, err := sqlx.Open("sqlite3", uri+"?mode=ro&_busy_timeout=5000&_stmt_cache_size=32")
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(readers)
	reader.SetMaxIdleConns(readers)

	s := &Store{writer: writer, reader: reader, opts: o}
	s.progress.init()
	s.hub.init()
	spec, status, err := loadCheckpoints(writer)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	s.progress.restore(spec, status)
	if err := s.cache.load(writer, position{spec, status}); err != nil {
		s.Close()
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	epoch, err := readEpoch(writer)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open read model %s: %w", path, err)
	}
	s.epoch.Store(&epoch)
	return s, nil
}

// Close closes the database and ends every watch. Stop [Store.Fold] (cancel its context
// and wait for it to return) before calling Close.
func (s *Store) Close() error {
	s.hub.close()
	_, optErr := s.writer.Exec("PRAGMA optimize")
	return errors.Join(optErr, s.reader.Close(), s.writer.Close())
}

// escapeURIPath keeps a file name from being read as URI syntax by SQLite.
func escapeURIPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}
