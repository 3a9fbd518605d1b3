package readmodel

import (
	"database/sql"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func TestFilterView(t *testing.T) {
	web := `{"app":"web"}`
	db := `{"app":"db"}`
	tests := []struct {
		name  string
		typ   string
		now   string
		prev  *string // nil: the object did not exist before
		field string
		want  string // "" = not seen
	}{
		{"added, matching", Added, web, nil, "", Added},
		{"added, not matching", Added, db, nil, "", ""},
		{"modified, still matching", Modified, web, &web, "", Modified},
		{"modified into the selection", Modified, web, &db, "", Added},
		{"modified out of the selection", Modified, db, &web, "", Deleted},
		{"modified, never matching", Modified, db, &db, "", ""},
		{"deleted, was matching", Deleted, db, &web, "", Deleted},
		{"deleted, was not matching", Deleted, web, &db, "", ""},
		{"recreated with other labels", Added, db, &web, "", Deleted},
		{"field selector excludes", Added, web, nil, "metadata.name=other", ""},
		{"other plural", "", web, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := newFilter(vms, "", labels.SelectorFromSet(labels.Set{"app": "web"}), fields.ParseSelectorOrDie(tt.field))
			if err != nil {
				t.Fatal(err)
			}
			c := changeRecord{Type: tt.typ, Plural: vms, Namespace: "ns", Name: "vm", Labels: tt.now}
			if tt.typ == "" {
				c.Type, c.Plural = Added, "other"
			}
			if tt.prev != nil {
				c.PrevLabels = sql.NullString{String: *tt.prev, Valid: true}
			}
			if err := c.decode(); err != nil {
				t.Fatal(err)
			}
			got, ok := f.view(&c)
			if !ok {
				got = ""
			}
			if got != tt.want {
				t.Errorf("view() = %q, want %q", got, tt.want)
			}
		})
	}
}
