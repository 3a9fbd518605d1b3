package readmodel

import (
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jmoiron/sqlx"
	"github.com/vmop/vmop/pkg/events"
)

// schemaVersion is stored in PRAGMA user_version; a file written by another version is
// emptied rather than misread, and the fold rebuilds it from the streams.
const schemaVersion = 2

// tables are every table of the schema, dropped when a file of another version is opened.
var tables = []string{"objects", "slices", "checkpoints", "changes", "log_horizon", "epoch"}

const schema = `
CREATE TABLE IF NOT EXISTS objects (
	plural             TEXT    NOT NULL,
	namespace          TEXT    NOT NULL, -- '' for cluster-scoped kinds
	name               TEXT    NOT NULL,
	uid                TEXT    NOT NULL,
	spec_seq           INTEGER NOT NULL, -- SPECS sequence of the object's latest record
	status_seq         INTEGER NOT NULL, -- highest STATUS sequence among its uid-matching slices
	labels             TEXT    NOT NULL, -- JSON object, for label selectors
	finalizers         TEXT    NOT NULL, -- JSON array
	deletion_requested INTEGER NOT NULL,
	released           TEXT    NOT NULL, -- JSON array of services whose slice says released
	spec               BLOB    NOT NULL, -- the SPECS record body, kept to re-materialise on status changes
	object             BLOB    NOT NULL, -- the materialised object served to clients
	PRIMARY KEY (plural, namespace, name)
);

CREATE TABLE IF NOT EXISTS slices (
	plural     TEXT    NOT NULL,
	namespace  TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	service    TEXT    NOT NULL,
	uid        TEXT    NOT NULL,
	seq        INTEGER NOT NULL, -- STATUS sequence of the slice
	generation INTEGER NOT NULL,
	released   INTEGER NOT NULL,
	status     BLOB,             -- the service's part of .status (a JSON object) or NULL
	PRIMARY KEY (plural, namespace, name, service)
);

CREATE TABLE IF NOT EXISTS checkpoints (
	stream  TEXT    PRIMARY KEY,
	seq     INTEGER NOT NULL, -- last applied stream sequence
	subject TEXT    NOT NULL, -- and the identity of the message there (events.Mark),
	digest  TEXT    NOT NULL  -- checked against the stream before folding on
);

-- epoch names this projection's history: it changes whenever the projection starts
-- over (a new file, a rebuild), so positions kept by others can be told stale.
CREATE TABLE IF NOT EXISTS epoch (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	value TEXT    NOT NULL
);

-- changes is the append-only, bounded log that watches replay from.
CREATE TABLE IF NOT EXISTS changes (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	stream      TEXT    NOT NULL, -- the stream of the triggering message
	seq         INTEGER NOT NULL, -- its sequence
	type        TEXT    NOT NULL, -- ADDED, MODIFIED or DELETED
	plural      TEXT    NOT NULL,
	namespace   TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	labels      TEXT    NOT NULL, -- labels after the change
	prev_labels TEXT,             -- labels before it; NULL when the object did not exist
	object      BLOB    NOT NULL,
	rv          TEXT    NOT NULL
);

-- log_horizon remembers what pruning removed, to tell a resumable RV from a gone one.
CREATE TABLE IF NOT EXISTS log_horizon (
	id                INTEGER PRIMARY KEY CHECK (id = 1),
	pruned_id         INTEGER NOT NULL, -- highest change id pruned
	pruned_spec_seq   INTEGER NOT NULL, -- highest SPECS seq among pruned changes
	pruned_status_seq INTEGER NOT NULL  -- highest STATUS seq among pruned changes
);
INSERT OR IGNORE INTO log_horizon VALUES (1, 0, 0, 0);
`

// migrate creates the schema if absent. A file of another schema version is a projection
// of the same streams in another shape: its tables are dropped and the fold rebuilds them.
func migrate(db *sqlx.DB, log *slog.Logger) error {
	var version int
	if err := db.Get(&version, "PRAGMA user_version"); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	tx, err := db.Beginx()
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	defer tx.Rollback()
	if version != 0 && version != schemaVersion {
		log.Warn("read model file has another schema version: rebuilding it from the streams", "version", version, "want", schemaVersion)
		for _, table := range tables {
			if _, err := tx.Exec("DROP TABLE IF EXISTS " + table); err != nil {
				return fmt.Errorf("drop %s of schema version %d: %w", table, version, err)
			}
		}
	}
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO epoch (id, value) VALUES (1, ?)`, rand.Text()); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

// loadCheckpoints reads the last applied sequence of each stream (0 when none).
func loadCheckpoints(q sqlx.Queryer) (spec, status uint64, err error) {
	specMark, err := checkpoint(q, events.StreamSpecs)
	if err != nil {
		return 0, 0, err
	}
	statusMark, err := checkpoint(q, events.StreamStatus)
	if err != nil {
		return 0, 0, err
	}
	return specMark.Seq, statusMark.Seq, nil
}

// checkpoint reads the mark of the last applied message of stream (zero when none).
func checkpoint(q sqlx.Queryer, stream string) (events.Mark, error) {
	var m events.Mark
	err := q.QueryRowx("SELECT seq, subject, digest FROM checkpoints WHERE stream = ?", stream).
		Scan(&m.Seq, &m.Subject, &m.Digest)
	if errors.Is(err, sql.ErrNoRows) {
		return events.Mark{}, nil
	}
	if err != nil {
		return events.Mark{}, fmt.Errorf("read %s checkpoint: %w", stream, err)
	}
	return m, nil
}

func readEpoch(q sqlx.Queryer) (string, error) {
	var epoch string
	if err := sqlx.Get(q, &epoch, "SELECT value FROM epoch WHERE id = 1"); err != nil {
		return "", fmt.Errorf("read epoch: %w", err)
	}
	return epoch, nil
}
