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
	// FromRV "" or "0" starts at the current state; "a.b" (an object or list RV) resumes
	// after it: every change triggered by a SPECS message with seq > a or a STATUS message
	// with seq > b.
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
	RV     string // the object's resourceVersion, as in Object's metadata
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

// parseRV reads "a.b"; "" and "0" are the zero position.
func parseRV(rv string) (position, error) {
	if rv == "" || rv == "0" {
		return position{}, nil
	}
	a, b, ok := strings.Cut(rv, ".")
	spec, errA := strconv.ParseUint(a, 10, 64)
	status, errB := strconv.ParseUint(b, 10, 64)
	if !ok || errA != nil || errB != nil {
		return position{}, fmt.Errorf("resourceVersion %q: %w", rv, ErrInvalid)
	}
	return position{spec: spec, status: status}, nil
}
