package readmodel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Sentinel errors; decide with [errors.Is].
var (
	// ErrNotFound means no object has that plural, namespace and name.
	ErrNotFound = errors.New("not found")
	// ErrGone means a watch asked to resume from a resourceVersion older than the change
	// log keeps (HTTP 410 Expired: the client must list again).
	ErrGone = errors.New("resource version too old")
	// ErrInvalid means a malformed request: resourceVersion, continue token or a field
	// selector on an unsupported field.
	ErrInvalid = errors.New("invalid request")
)

// Change types, as in a Kubernetes watch.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
)

// Object is one materialised object and the facts the gateway needs to finalize its
// deletion.
type Object struct {
	Plural, Namespace, Name string
	UID                     string
	SpecSeq                 uint64 // SPECS sequence of the object's latest record (the update CAS base)
	StatusSeq               uint64 // highest STATUS sequence among its uid-matching slices, 0 if none
	RV                      string // "<SpecSeq>.<StatusSeq>", also metadata.resourceVersion in JSON
	Labels                  map[string]string
	Finalizers              []string
	DeletionRequested       bool            // metadata.deletionTimestamp is set
	Released                map[string]bool // services whose uid-matching slice has released=true
	JSON                    []byte          // the whole object: spec record + merged status + resourceVersion
}

// ListOptions selects the objects of a list.
type ListOptions struct {
	Plural    string
	Namespace string          // "" = all namespaces (and cluster-scoped objects)
	Label     labels.Selector // nil = everything
	Fields    fields.Selector // nil = everything; only metadata.name and metadata.namespace
	Limit     int64           // 0 = no limit
	Continue  string          // the token of the previous page, "" for the first page
	// ExactRV, when set, asks for the list at exactly that resourceVersion: the read model
	// keeps only its current state, so any other is [ErrGone].
	ExactRV string
}

// ListResult is one page of a list, ordered by (namespace, name).
type ListResult struct {
	Items []Object
	// RV is "<specCheckpoint>.<statusCheckpoint>" of the read model when the first page
	// was read; later pages repeat it (see [Store.List]).
	RV string
	// Continue is the token for the next page; "" when this page is the last.
	Continue string
}

// WatchOptions selects what a watch delivers and from where.
type WatchOptions struct {
	Plural    string
	Namespace string // "" = all namespaces
	Label     labels.Selector
	Fields    fields.Selector
	// FromRV "" or "0" starts at the current state; any other resumes after the position
	// it names (parseRV), a.b: every change triggered by a SPECS message with seq > a or a
	// STATUS message with seq > b.
	FromRV string
	// SendInitial, with FromRV "" or "0", first sends a synthetic ADDED for every current
	// matching object. Ignored when resuming.
	SendInitial bool
	// InitialEventsEnd, with SendInitial, sends a [Bookmark] after the initial events whose
	// RV is the list RV they reflect (Kubernetes sendInitialEvents).
	InitialEventsEnd bool
	// BookmarkEvery, when positive, sends a [Bookmark] that often once the watch has caught
	// up, carrying a position every change up to which the watch has already delivered
	// (Kubernetes allowWatchBookmarks), so a client resumes from it without a gap.
	BookmarkEvery time.Duration
}

// Change is one watch event.
type Change struct {
	Type   string // Added, Modified, Deleted or Bookmark
	Object []byte // the object after the change (for Deleted: its last state; none for Bookmark)
	RV     string // the resourceVersion in Object's metadata: a logged change's eventRV
	// InitialEventsEnd marks the Bookmark that ends the initial events.
	InitialEventsEnd bool
}

// position is a point in the two streams: a resourceVersion "spec.status".
type position struct{ spec, status uint64 }

func (p position) String() string {
	return strconv.FormatUint(p.spec, 10) + "." + strconv.FormatUint(p.status, 10)
}

// after reports whether a change triggered by message seq of stream lies after p.
func (p position) after(stream string, seq uint64) bool {
	if stream == events.StreamSpecs {
		return seq > p.spec
	}
	return seq > p.status
}

// parseRV reads a resourceVersion as the position it names: "a.b" (a list's, or an
// object's own version) is that position; "a.b.c.d", the version a.b of an object as a
// watch event delivered it, is the position c.d the read model was at when it logged the
// change (eventRV). "" and "0" are the zero position.
func parseRV(rv string) (position, error) {
	if rv == "" || rv == "0" {
		return position{}, nil
	}
	parts := strings.Split(rv, ".")
	if len(parts) != 2 && len(parts) != 4 {
		return position{}, fmt.Errorf("resourceVersion %q: %w", rv, ErrInvalid)
	}
	seqs := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return position{}, fmt.Errorf("resourceVersion %q: %w", rv, ErrInvalid)
		}
		seqs[i] = n
	}
	at := position{spec: seqs[len(seqs)-2], status: seqs[len(seqs)-1]}
	if len(seqs) == 4 && (at.spec < seqs[0] || at.status < seqs[1]) {
		return position{}, fmt.Errorf("resourceVersion %q: logged before its own version: %w", rv, ErrInvalid)
	}
	return at, nil
}

// eventRV is the resourceVersion of a watch event: the object's version, then the
// position the change was logged at. A client resuming from it gets exactly the changes
// logged after it, where the object's version alone would repeat every change of other
// objects at a SPECS sequence above its own (a status change of an object with an old
// record). Writes read its first part, the object's record, as they read any
// resourceVersion; reads wait for its position.
func eventRV(version, at position) string { return version.String() + "." + at.String() }

// ObjectVersion is the object's version "a.b" that a resourceVersion names: rv itself, or
// the first half of a watch event's (eventRV). Writes compare it with the object's.
func ObjectVersion(rv string) string {
	if parts := strings.Split(rv, "."); len(parts) == 4 {
		return parts[0] + "." + parts[1]
	}
	return rv
}
