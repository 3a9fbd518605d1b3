package readmodel

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/vmop/vmop/pkg/events"
)

// schemaVersion is stored in PRAGMA user_version; a file written by another version is
// refused rather than misread (delete it: the streams rebuild it).
const schemaVersion = 1

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
	stream TEXT    PRIMARY KEY,
	seq    INTEGER NOT NULL -- last applied stream sequence
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

// migrate creates the schema if absent and refuses files of another schema version.
func migrate(db *sqlx.DB) error {
	var version int
	if err := db.Get(&version, "PRAGMA user_version"); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version != 0 && version != schemaVersion {
		return fmt.Errorf("schema version %d, want %d: delete the file to rebuild it from the streams", version, schemaVersion)
	}
	tx, err := db.Beginx()
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
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
	if spec, err = checkpoint(q, events.StreamSpecs); err != nil {
		return 0, 0, err
	}
	if status, err = checkpoint(q, events.StreamStatus); err != nil {
		return 0, 0, err
	}
	return spec, status, nil
}

func checkpoint(q sqlx.Queryer, stream string) (uint64, error) {
	var seq uint64
	err := sqlx.Get(q, &seq, "SELECT seq FROM checkpoints WHERE stream = ?", stream)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s checkpoint: %w", stream, err)
	}
	return seq, nil
}
