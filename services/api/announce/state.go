package announce

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"github.com/vmop/vmop/pkg/events"
)

// announcerState is the announcer's memory, in its own SQLite file beside the read
// model: the resourceVersion it has announced up to (where a restart resumes its watch)
// with the read model epoch that resourceVersion belongs to, what it announced about
// every VirtualMachine (what the next change is compared with), and the events it had to
// skip because no retry could publish them. It is this gateway's own, like its read
// model; replicas agree through deterministic event ids, not through shared state.
//
// It is a separate file, not a table of the read model, because the read model is a
// disposable projection: deleting it and folding again must not make the gateway
// announce history again, and positions in the streams stay valid across a rebuild.
type announcerState struct {
	db    *sqlx.DB
	epoch string // the read model epoch saved with every cursor
}

const announcerSchema = `
CREATE TABLE IF NOT EXISTS cursor (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	rv    TEXT    NOT NULL,           -- every change up to this resourceVersion is announced
	epoch TEXT    NOT NULL DEFAULT '' -- the read model epoch rv belongs to
);
CREATE TABLE IF NOT EXISTS skipped ( -- events no retry could publish: the operator's record
	id        TEXT NOT NULL PRIMARY KEY, -- the CloudEvent id
	type      TEXT NOT NULL,
	namespace TEXT NOT NULL,
	name      TEXT NOT NULL,
	error     TEXT NOT NULL,
	at        TEXT NOT NULL -- RFC 3339
);
CREATE TABLE IF NOT EXISTS announced (
	namespace TEXT NOT NULL,
	name      TEXT NOT NULL,
	facts     BLOB NOT NULL, -- JSON of announced
	PRIMARY KEY (namespace, name)
);
`

func openAnnouncerState(path string) (*announcerState, error) {
	db, err := sqlx.Open("sqlite3", "file:"+escapeSQLitePath(path)+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open announcer state %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := migrateAnnouncerState(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open announcer state %s: %w", path, err)
	}
	return &announcerState{db: db}, nil
}

// migrateAnnouncerState creates the schema, and adds the epoch to a file written before
// the cursor had one (its empty epoch matches no read model: the cursor is not trusted).
func migrateAnnouncerState(db *sqlx.DB) error {
	if _, err := db.Exec(announcerSchema); err != nil {
		return err
	}
	var hasEpoch bool
	if err := db.Get(&hasEpoch, `SELECT COUNT(*) > 0 FROM pragma_table_info('cursor') WHERE name = 'epoch'`); err != nil {
		return err
	}
	if !hasEpoch {
		_, err := db.Exec(`ALTER TABLE cursor ADD COLUMN epoch TEXT NOT NULL DEFAULT ''`)
		return err
	}
	return nil
}

func (s *announcerState) Close() error { return s.db.Close() }

// load returns the cursor ("" when nothing was announced yet), the read model epoch it
// belongs to, and the announced facts by "namespace/name".
func (s *announcerState) load() (cursor, epoch string, _ map[string]*announced, _ error) {
	err := s.db.QueryRowx(`SELECT rv, epoch FROM cursor WHERE id = 1`).Scan(&cursor, &epoch)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", nil, fmt.Errorf("read announcer cursor: %w", err)
	}
	var rows []struct {
		Namespace string `db:"namespace"`
		Name      string `db:"name"`
		Facts     []byte `db:"facts"`
	}
	if err := s.db.Select(&rows, `SELECT namespace, name, facts FROM announced`); err != nil {
		return "", "", nil, fmt.Errorf("read announced facts: %w", err)
	}
	facts := make(map[string]*announced, len(rows))
	for _, r := range rows {
		var a announced
		if err := json.Unmarshal(r.Facts, &a); err != nil {
			return "", "", nil, fmt.Errorf("announced facts of %s/%s: %w", r.Namespace, r.Name, err)
		}
		facts[r.Namespace+"/"+r.Name] = &a
	}
	return cursor, epoch, facts, nil
}

// save records, in one transaction, what is now announced about a VM (nil: it is gone)
// and, unless cursor is "", the new cursor.
func (s *announcerState) save(namespace, name string, a *announced, cursor string) error {
	tx, err := s.db.Beginx()
	if err != nil {
		return fmt.Errorf("save announced state: %w", err)
	}
	defer tx.Rollback()
	if a == nil {
		_, err = tx.Exec(`DELETE FROM announced WHERE namespace = ? AND name = ?`, namespace, name)
	} else {
		var facts []byte
		if facts, err = json.Marshal(a); err == nil {
			_, err = tx.Exec(`INSERT INTO announced (namespace, name, facts) VALUES (?, ?, ?)
				ON CONFLICT (namespace, name) DO UPDATE SET facts = excluded.facts`, namespace, name, facts)
		}
	}
	if err == nil && cursor != "" {
		_, err = tx.Exec(saveCursorSQL, cursor, s.epoch)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("save announced state of %s/%s: %w", namespace, name, err)
	}
	return nil
}

const saveCursorSQL = `INSERT INTO cursor (id, rv, epoch) VALUES (1, ?, ?)
	ON CONFLICT (id) DO UPDATE SET rv = excluded.rv, epoch = excluded.epoch`

// saveCursor records the cursor alone.
func (s *announcerState) saveCursor(cursor string) error {
	if _, err := s.db.Exec(saveCursorSQL, cursor, s.epoch); err != nil {
		return fmt.Errorf("save announcer cursor: %w", err)
	}
	return nil
}

// escapeSQLitePath keeps a file name from being read as URI syntax by SQLite.
func escapeSQLitePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// recordSkipped records an event that was skipped because it cannot be published.
func (s *announcerState) recordSkipped(ref events.Ref, typ, id string, cause error) error {
	if _, err := s.db.Exec(`INSERT INTO skipped (id, type, namespace, name, error, at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET error = excluded.error, at = excluded.at`,
		id, typ, ref.Namespace, ref.Name, cause.Error(), time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("record skipped event %s: %w", id, err)
	}
	return nil
}
