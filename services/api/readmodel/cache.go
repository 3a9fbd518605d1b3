package readmodel

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// cache holds every object in memory, as SQLite holds it after the last committed batch,
// so that get, list and the initial events of a watch read no rows and decode nothing.
// SQLite stays the durable projection: the cache is loaded from it at open and then kept
// by the fold, which applies each committed batch to it together with the position and
// change id the batch reached, so one read lock sees a consistent state.
type cache struct {
	mu     sync.RWMutex
	kinds  map[string]*kindCache
	at     position // checkpoints the objects reflect
	lastID uint64   // newest change id they reflect
}

// kindCache is one plural's objects, by key, in (namespace, name) order, and by label.
// Objects are never modified once cached: a change replaces the pointer, so readers may
// keep them.
type kindCache struct {
	byKey   map[objectKey]*Object
	sorted  []*Object
	byLabel map[labelPair]map[objectKey]struct{}
}

// labelPair is one label, key and value: what an equality selector looks up.
type labelPair struct{ key, value string }

// cacheOp is one object's state after a batch: set, or gone when del.
type cacheOp struct {
	plural string
	key    objectKey
	obj    *Object // nil when del
	del    bool
}

func (c *cache) reset(at position, lastID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds, c.at, c.lastID = map[string]*kindCache{}, at, lastID
}

// load fills the cache from the database's objects.
func (c *cache) load(q sqlx.Queryer, at position) error {
	lastID, err := lastChangeID(q)
	if err != nil {
		return err
	}
	c.reset(at, lastID)
	rows, err := q.Queryx(`SELECT ` + objectColumns + ` FROM objects ORDER BY plural, namespace, name`)
	if err != nil {
		return fmt.Errorf("load objects: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r objectRow
		if err := rows.StructScan(&r); err != nil {
			return fmt.Errorf("load objects: %w", err)
		}
		o, err := r.object()
		if err != nil {
			return err
		}
		k := c.kind(o.Plural)
		k.byKey[objectKey{o.Namespace, o.Name}] = &o
		k.sorted = append(k.sorted, &o) // the query returns them in order
		k.index(&o)
	}
	return rows.Err()
}

// kind returns plural's objects, creating the entry; the caller holds c.mu for writing.
func (c *cache) kind(plural string) *kindCache {
	k := c.kinds[plural]
	if k == nil {
		k = &kindCache{byKey: map[objectKey]*Object{}, byLabel: map[labelPair]map[objectKey]struct{}{}}
		c.kinds[plural] = k
	}
	return k
}

// apply makes a committed batch visible: its objects, and the position and change id it
// reached (zero parts leave them unchanged).
func (c *cache) apply(ops []cacheOp, at position, lastID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, op := range ops {
		k := c.kind(op.plural)
		i, found := slices.BinarySearchFunc(k.sorted, op.key, compareKey)
		switch {
		case op.del && found:
			k.unindex(k.sorted[i])
			delete(k.byKey, op.key)
			k.sorted = slices.Delete(k.sorted, i, i+1)
		case op.del:
		case found:
			k.unindex(k.sorted[i])
			k.byKey[op.key], k.sorted[i] = op.obj, op.obj
			k.index(op.obj)
		default:
			k.byKey[op.key] = op.obj
			k.sorted = slices.Insert(k.sorted, i, op.obj)
			k.index(op.obj)
		}
	}
	c.at = position{max(c.at.spec, at.spec), max(c.at.status, at.status)}
	c.lastID = max(c.lastID, lastID)
}

func (k *kindCache) index(o *Object) {
	for key, value := range o.Labels {
		p := labelPair{key, value}
		set := k.byLabel[p]
		if set == nil {
			set = map[objectKey]struct{}{}
			k.byLabel[p] = set
		}
		set[objectKey{o.Namespace, o.Name}] = struct{}{}
	}
}

func (k *kindCache) unindex(o *Object) {
	for key, value := range o.Labels {
		p := labelPair{key, value}
		delete(k.byLabel[p], objectKey{o.Namespace, o.Name})
		if len(k.byLabel[p]) == 0 {
			delete(k.byLabel, p)
		}
	}
}

// candidates narrows a label selector to the objects that carry one of the values an
// equality or set requirement asks for, the fewest of any requirement, in key order;
// ok is false when no requirement can use the index (then every object is a candidate).
func (k *kindCache) candidates(sel labels.Selector) (_ []*Object, ok bool) {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, false
	}
	var best []map[objectKey]struct{}
	bestSize := -1
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		var sets []map[objectKey]struct{}
		size := 0
		for v := range r.Values() {
			if set := k.byLabel[labelPair{r.Key(), v}]; len(set) > 0 {
				sets, size = append(sets, set), size+len(set)
			}
		}
		if bestSize < 0 || size < bestSize {
			best, bestSize = sets, size
		}
	}
	if bestSize < 0 {
		return nil, false
	}
	objs := make([]*Object, 0, bestSize)
	for _, set := range best {
		for key := range set {
			objs = append(objs, k.byKey[key])
		}
	}
	slices.SortFunc(objs, func(a, b *Object) int { return compareKey(a, objectKey{b.Namespace, b.Name}) })
	return objs, true
}

// compareKey orders objects as SQLite's BINARY collation orders (namespace, name).
func compareKey(o *Object, k objectKey) int {
	if c := strings.Compare(o.Namespace, k.namespace); c != 0 {
		return c
	}
	return strings.Compare(o.Name, k.name)
}

func (c *cache) get(plural, namespace, name string) (*Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k := c.kinds[plural]
	if k == nil {
		return nil, false
	}
	o, ok := k.byKey[objectKey{namespace, name}]
	return o, ok
}

// view is a consistent read of the cache: what select finds, with the position and the
// change id that state reflects.
type view struct {
	items  []*Object
	more   bool // a further object matches beyond limit
	at     position
	lastID uint64
}

// selectObjects returns the objects f selects after key, in key order, up to limit (0 =
// all). A namespace (from the path or the field selector) narrows the scan to its range
// of the order, a name to one lookup, a label requirement to the label index's objects.
func (c *cache) selectObjects(f objectFilter, after objectKey, limit int64) view {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v := view{at: c.at, lastID: c.lastID}
	k := c.kinds[f.plural]
	if k == nil {
		return v
	}
	namespace, name := f.exact()
	if namespace != "" && name != "" {
		if o, ok := k.byKey[objectKey{namespace, name}]; ok && after.less(objectKey{namespace, name}) && f.matches(o.Plural, o.Namespace, o.Name, o.Labels) {
			v.items = []*Object{o}
		}
		return v
	}
	scan := k.sorted
	if objs, ok := k.candidates(f.label); ok {
		scan = objs
	}
	start := after
	if namespace != "" && start.less(objectKey{namespace, ""}) {
		start = objectKey{namespace, ""}
	}
	i, found := slices.BinarySearchFunc(scan, start, compareKey)
	if found {
		i++ // only the previous page's last key can be found: no name is empty
	}
	for _, o := range scan[i:] {
		if namespace != "" && o.Namespace != namespace {
			break
		}
		if !f.matches(o.Plural, o.Namespace, o.Name, o.Labels) {
			continue
		}
		if limit > 0 && int64(len(v.items)) == limit {
			v.more = true
			break
		}
		v.items = append(v.items, o)
	}
	return v
}
