package kubeevents

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// row is one stored Event with the columns selectors read.
type row struct {
	Seq        uint64 `db:"seq"`
	Namespace  string `db:"namespace"`
	Name       string `db:"name"`
	Kind       string `db:"kind"`
	APIVersion string `db:"api_version"`
	ObjectName string `db:"object_name"`
	ObjectUID  string `db:"object_uid"`
	Reason     string `db:"reason"`
	Type       string `db:"type"`
	Source     string `db:"source"`
	Event      []byte `db:"event"`
}

func rowOf(ev *corev1.Event, body []byte) row {
	seq, _ := strconv.ParseUint(ev.ResourceVersion, 10, 64)
	return row{
		Seq: seq, Namespace: ev.Namespace, Name: ev.Name,
		Kind: ev.InvolvedObject.Kind, APIVersion: ev.InvolvedObject.APIVersion,
		ObjectName: ev.InvolvedObject.Name, ObjectUID: string(ev.InvolvedObject.UID),
		Reason: ev.Reason, Type: ev.Type, Source: ev.Source.Component, Event: body,
	}
}

// fieldColumns are the field selectors Events answer, as kube-apiserver's (core v1
// spelling, and the events.k8s.io/v1 one), and the column each reads.
var fieldColumns = map[string]string{
	"metadata.name":                  "name",
	"metadata.namespace":             "namespace",
	"involvedObject.kind":            "kind",
	"involvedObject.apiVersion":      "api_version",
	"involvedObject.name":            "object_name",
	"involvedObject.namespace":       "namespace",
	"involvedObject.uid":             "object_uid",
	"regarding.kind":                 "kind",
	"regarding.apiVersion":           "api_version",
	"regarding.name":                 "object_name",
	"regarding.namespace":            "namespace",
	"regarding.uid":                  "object_uid",
	"reason":                         "reason",
	"type":                           "type",
	"source":                         "source",
	"reportingComponent":             "source",
	"reportingController":            "source",
	"deprecatedSource":               "source",
	"involvedObject.fieldPath":       "", // never set: matches only ""
	"involvedObject.resourceVersion": "",
}

// condition is one field requirement on a column ("" = a field never set).
type condition struct {
	column string
	equal  bool
	value  string
}

// filter selects Events: a namespace ("" = all) and field requirements.
type filter struct {
	namespace  string
	conditions []condition
}

// newFilter reads a field selector; an unknown field or operator is ErrInvalid.
func newFilter(namespace string, sel fields.Selector) (filter, error) {
	f := filter{namespace: namespace}
	if sel == nil {
		return f, nil
	}
	for _, r := range sel.Requirements() {
		column, ok := fieldColumns[r.Field]
		if !ok {
			return f, fmt.Errorf("%w: field label not supported: %s", ErrInvalid, r.Field)
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			f.conditions = append(f.conditions, condition{column, true, r.Value})
		case selection.NotEquals:
			f.conditions = append(f.conditions, condition{column, false, r.Value})
		default:
			return f, fmt.Errorf("%w: field selector operator %s not supported", ErrInvalid, r.Operator)
		}
	}
	return f, nil
}

// where is the filter as SQL conditions with their arguments.
func (f filter) where() (string, []any) {
	clauses, args := []string{"1"}, []any{}
	if f.namespace != "" {
		clauses, args = append(clauses, "namespace = ?"), append(args, f.namespace)
	}
	for _, c := range f.conditions {
		column, op := c.column, "="
		if column == "" {
			column = "''"
		}
		if !c.equal {
			op = "!="
		}
		clauses, args = append(clauses, column+" "+op+" ?"), append(args, c.value)
	}
	return strings.Join(clauses, " AND "), args
}

// matches is where for one row.
func (f filter) matches(r *row) bool {
	if f.namespace != "" && r.Namespace != f.namespace {
		return false
	}
	for _, c := range f.conditions {
		if (r.column(c.column) == c.value) != c.equal {
			return false
		}
	}
	return true
}

func (r *row) column(name string) string {
	switch name {
	case "name":
		return r.Name
	case "namespace":
		return r.Namespace
	case "kind":
		return r.Kind
	case "api_version":
		return r.APIVersion
	case "object_name":
		return r.ObjectName
	case "object_uid":
		return r.ObjectUID
	case "reason":
		return r.Reason
	case "type":
		return r.Type
	case "source":
		return r.Source
	}
	return ""
}

// ListOptions select the Events of a list.
type ListOptions struct {
	Namespace string // "" = every namespace
	Fields    fields.Selector
	Limit     int64  // 0 = all
	Continue  string // from the previous page's ListResult
}

// ListResult is one page of Events, oldest first, as v1 Event JSON.
type ListResult struct {
	Items    [][]byte
	RV       string // the list's resourceVersion, the same on every page
	Continue string // "" on the last page
}

// List reads the selected Events.
func (s *Store) List(o ListOptions) (ListResult, error) {
	f, err := newFilter(o.Namespace, o.Fields)
	if err != nil {
		return ListResult{}, err
	}
	rv, _ := s.position()
	after := uint64(0)
	if o.Continue != "" {
		if rv, after, err = parseContinue(o.Continue); err != nil {
			return ListResult{}, err
		}
	}
	where, args := f.where()
	// Every page holds the Events up to the list's resourceVersion, as one snapshot.
	query := `SELECT seq, event FROM events WHERE seq > ? AND seq <= ? AND ` + where + ` ORDER BY seq`
	args = append([]any{after, rv}, args...)
	if o.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, o.Limit+1)
	}
	var rows []row
	if err := sqlx.Select(s.reader, &rows, query, args...); err != nil {
		return ListResult{}, fmt.Errorf("list events: %w", err)
	}
	res := ListResult{RV: strconv.FormatUint(rv, 10)}
	if o.Limit > 0 && int64(len(rows)) > o.Limit {
		rows = rows[:o.Limit]
		res.Continue = fmt.Sprintf("%d/%d", rv, rows[len(rows)-1].Seq)
	}
	for _, r := range rows {
		res.Items = append(res.Items, r.Event)
	}
	return res, nil
}

// parseContinue reads "<list RV>/<last seq listed>".
func parseContinue(token string) (rv, after uint64, err error) {
	a, b, ok := strings.Cut(token, "/")
	rv, errA := strconv.ParseUint(a, 10, 64)
	after, errB := strconv.ParseUint(b, 10, 64)
	if !ok || errA != nil || errB != nil || after > rv {
		return 0, 0, fmt.Errorf("%w: continue token %q", ErrInvalid, token)
	}
	return rv, after, nil
}

// Get reads one Event by namespace and name. An Event's name ends in its sequence in hex.
func (s *Store) Get(namespace, name string) ([]byte, error) {
	_, hex, ok := cutLast(name, ".")
	seq, err := strconv.ParseUint(hex, 16, 64)
	if !ok || err != nil {
		return nil, ErrNotFound
	}
	var body []byte
	err = s.reader.Get(&body, `SELECT event FROM events WHERE seq = ? AND namespace = ? AND name = ?`, seq, namespace, name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read event %s/%s: %w", namespace, name, err)
	}
	return body, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// readPage reads up to n Events after seq that f selects, oldest first.
func (s *Store) readPage(ctx context.Context, f filter, after uint64, n int) ([]row, error) {
	where, args := f.where()
	var rows []row
	err := sqlx.SelectContext(ctx, s.reader, &rows,
		`SELECT seq, namespace, name, kind, api_version, object_name, object_uid, reason, type, source, event
		FROM events WHERE seq > ? AND `+where+` ORDER BY seq LIMIT ?`, append(append([]any{after}, args...), n)...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return rows, nil
}
