package readmodel

import (
	"encoding/json"
	"errors"
	"fmt"
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
	o, ok := s.cache.get(plural, namespace, name)
	if !ok {
		return Object{}, fmt.Errorf("%s %q: %w", plural, name, ErrNotFound)
	}
	return *o, nil
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
	v := s.cache.selectObjects(f, objectKey{tok.Namespace, tok.Name}, o.Limit)
	if tok.RV == "" {
		if o.ExactRV != "" && v.at != exact {
			return ListResult{}, fmt.Errorf("resourceVersion %s, the read model is at %s: %w", exact, v.at, ErrGone)
		}
		tok.RV = v.at.String()
	}
	res := ListResult{Items: make([]Object, len(v.items)), RV: tok.RV}
	for i, obj := range v.items {
		res.Items[i] = *obj
	}
	if v.more {
		last := v.items[len(v.items)-1]
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
