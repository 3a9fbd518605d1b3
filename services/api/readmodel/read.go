package readmodel

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// objectColumns are the columns an [Object] is read from.
const objectColumns = `plural, namespace, name, uid, spec_seq, status_seq, labels, finalizers,
	deletion_requested, released, object`

type objectRow struct {
	Plural            string `db:"plural"`
	Namespace         string `db:"namespace"`
	Name              string `db:"name"`
	UID               string `db:"uid"`
	SpecSeq           uint64 `db:"spec_seq"`
	StatusSeq         uint64 `db:"status_seq"`
	Labels            string `db:"labels"`
	Finalizers        string `db:"finalizers"`
	DeletionRequested bool   `db:"deletion_requested"`
	Released          string `db:"released"`
	Object            []byte `db:"object"`
}

func (r objectRow) object() (Object, error) {
	o := Object{
		Plural: r.Plural, Namespace: r.Namespace, Name: r.Name, UID: r.UID,
		SpecSeq: r.SpecSeq, StatusSeq: r.StatusSeq, RV: position{r.SpecSeq, r.StatusSeq}.String(),
		DeletionRequested: r.DeletionRequested, JSON: r.Object,
	}
	var released []string
	err := errors.Join(
		json.Unmarshal([]byte(r.Labels), &o.Labels),
		json.Unmarshal([]byte(r.Finalizers), &o.Finalizers),
		json.Unmarshal([]byte(r.Released), &released),
	)
	if err != nil {
		return o, fmt.Errorf("decode stored %s %s/%s: %w", r.Plural, r.Namespace, r.Name, err)
	}
	if len(released) > 0 {
		o.Released = make(map[string]bool, len(released))
		for _, s := range released {
			o.Released[s] = true
		}
	}
	return o, nil
}

// Get returns one object; [ErrNotFound] when there is none. Namespace is "" for
// cluster-scoped kinds.
func (s *Store) Get(plural, namespace, name string) (Object, error) {
	var r objectRow
	err := s.reader.Get(&r, `SELECT `+objectColumns+` FROM objects
		WHERE plural = ? AND namespace = ? AND name = ?`, plural, namespace, name)
	if errors.Is(err, sql.ErrNoRows) {
		return Object{}, fmt.Errorf("%s %q: %w", plural, name, ErrNotFound)
	}
	if err != nil {
		return Object{}, fmt.Errorf("get %s %q: %w", plural, name, err)
	}
	return r.object()
}

// List returns the selected objects ordered by (namespace, name), at most o.Limit of them.
//
// A first page is one consistent snapshot and its RV says exactly which stream messages it
// reflects. Later pages (o.Continue) read the current state after the previous page's last
// key and repeat the first page's RV, as the apiserver does: an object may thus appear
// newer than RV, and one created or deleted meanwhile may or may not be listed, but a watch
// from RV misses nothing (best-effort paging, never a lost change). Errors wrap
// [ErrInvalid] for a bad selector or continue token.
func (s *Store) List(o ListOptions) (ListResult, error) {
	f, err := newFilter(o.Plural, o.Namespace, o.Label, o.Fields)
	if err != nil {
		return ListResult{}, err
	}
	exact, err := parseRV(o.ExactRV)
	if err != nil {
		return ListResult{}, err
	}
	var tok continueToken
	if o.Continue != "" {
		if tok, err = decodeContinue(o.Continue); err != nil {
			return ListResult{}, err
		}
	}
	tx, err := s.reader.Beginx()
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", o.Plural, err)
	}
	defer tx.Rollback()
	if tok.RV == "" {
		spec, status, err := loadCheckpoints(tx)
		if err != nil {
			return ListResult{}, fmt.Errorf("list %s: %w", o.Plural, err)
		}
		if cur := (position{spec, status}); o.ExactRV != "" && cur != exact {
			return ListResult{}, fmt.Errorf("resourceVersion %s, the read model is at %s: %w", exact, cur, ErrGone)
		}
		tok.RV = position{spec, status}.String()
	}
	items, more, err := scanObjects(tx, f, objectKey{tok.Namespace, tok.Name}, o.Limit)
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", o.Plural, err)
	}
	res := ListResult{Items: items, RV: tok.RV}
	if more {
		last := items[len(items)-1]
		res.Continue = encodeContinue(continueToken{Namespace: last.Namespace, Name: last.Name, RV: tok.RV})
	}
	return res, nil
}

// objectKey orders objects within a plural.
type objectKey struct{ namespace, name string }

// less orders keys as SQLite's BINARY collation orders the (namespace, name) index.
func (k objectKey) less(o objectKey) bool {
	return k.namespace < o.namespace || (k.namespace == o.namespace && k.name < o.name)
}

// scanObjects reads the objects f selects after key, in key order, up to limit (0 = all).
// more reports that at least one further object matches.
func scanObjects(q sqlx.Queryer, f objectFilter, after objectKey, limit int64) (items []Object, more bool, err error) {
	chunk := int64(256)
	if limit > 0 {
		chunk = min(max(limit+1, 16), 1000)
	}
	query, args := scanQuery(f, chunk)
	for {
		var rows []objectRow
		if err := sqlx.Select(q, &rows, query, append(args, after.namespace, after.name)...); err != nil {
			return nil, false, err
		}
		for _, r := range rows {
			after = objectKey{r.Namespace, r.Name}
			var lbls map[string]string
			if err := json.Unmarshal([]byte(r.Labels), &lbls); err != nil {
				return nil, false, fmt.Errorf("decode stored labels of %s/%s: %w", r.Namespace, r.Name, err)
			}
			if !f.matches(r.Plural, r.Namespace, r.Name, lbls) {
				continue
			}
			if limit > 0 && int64(len(items)) == limit {
				return items, true, nil
			}
			o, err := r.object()
			if err != nil {
				return nil, false, err
			}
			items = append(items, o)
		}
		if int64(len(rows)) < chunk {
			return items, false, nil
		}
	}
}

// scanQuery is the SQL of one scanObjects chunk; its last two arguments (the key to start
// after) are appended per chunk.
func scanQuery(f objectFilter, chunk int64) (string, []any) {
	where := []string{"plural = ?"}
	args := []any{f.plural}
	namespace, name := f.exact()
	if namespace != "" {
		where, args = append(where, "namespace = ?"), append(args, namespace)
	}
	if name != "" {
		where, args = append(where, "name = ?"), append(args, name)
	}
	where = append(where, "(namespace, name) > (?, ?)")
	return fmt.Sprintf(`SELECT %s FROM objects WHERE %s ORDER BY namespace, name LIMIT %d`,
		objectColumns, strings.Join(where, " AND "), chunk), args
}
