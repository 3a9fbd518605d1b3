package readmodel

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Field selectors may only use what the read model indexes, like the apiserver for most kinds.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// objectFilter is the object selection shared by list and watch.
type objectFilter struct {
	plural, namespace string
	label             labels.Selector
	fields            fields.Selector
}

func newFilter(plural, namespace string, label labels.Selector, field fields.Selector) (objectFilter, error) {
	if plural == "" {
		return objectFilter{}, fmt.Errorf("no resource plural: %w", ErrInvalid)
	}
	if label == nil {
		label = labels.Everything()
	}
	if field == nil {
		field = fields.Everything()
	}
	for _, r := range field.Requirements() {
		if r.Field != fieldName && r.Field != fieldNamespace {
			return objectFilter{}, fmt.Errorf("field selector %q: only %s and %s are supported: %w",
				r.Field, fieldName, fieldNamespace, ErrInvalid)
		}
	}
	return objectFilter{plural: plural, namespace: namespace, label: label, fields: field}, nil
}

// exact returns the values the field selector pins namespace and name to, "" if any;
// the SQL uses them to narrow the scan.
func (f objectFilter) exact() (namespace, name string) {
	namespace = f.namespace
	if ns, ok := f.fields.RequiresExactMatch(fieldNamespace); ok && namespace == "" {
		namespace = ns
	}
	name, _ = f.fields.RequiresExactMatch(fieldName)
	return namespace, name
}

// matchesKey checks everything but labels.
func (f objectFilter) matchesKey(plural, namespace, name string) bool {
	if plural != f.plural || (f.namespace != "" && namespace != f.namespace) {
		return false
	}
	return f.fields.Matches(fields.Set{fieldName: name, fieldNamespace: namespace})
}

func (f objectFilter) matches(plural, namespace, name string, l labels.Set) bool {
	return f.matchesKey(plural, namespace, name) && f.label.Matches(l)
}

// view is how a logged change looks through the filter, like an apiserver watch with a
// label selector: an object whose labels start matching is ADDED, one that stops matching
// is DELETED. ok is false when the watcher does not see the change at all.
func (f objectFilter) view(c *changeRecord) (typ string, ok bool) {
	if !f.matchesKey(c.Plural, c.Namespace, c.Name) {
		return "", false
	}
	now := f.label.Matches(c.labels)
	before := c.prevLabels != nil && f.label.Matches(c.prevLabels)
	switch {
	case c.Type == Deleted:
		return Deleted, before || (c.prevLabels == nil && now)
	case now && before && c.Type == Modified:
		return Modified, true
	case now:
		return Added, true
	case before:
		return Deleted, true
	}
	return "", false
}
