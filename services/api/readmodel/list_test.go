package readmodel

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// seed stores objects and waits until they are folded.
func seed(h *harness, objs ...obj) {
	h.t.Helper()
	var last uint64
	for _, o := range objs {
		last = h.put(o)
	}
	h.waitSpec(last)
}

func names(items []Object) []string {
	out := []string{}
	for _, o := range items {
		out = append(out, o.Namespace+"/"+o.Name)
	}
	return out
}

func TestListSelectors(t *testing.T) {
	h := newHarness(t)
	seed(h,
		obj{ns: "b", name: "web-1", uid: "1", labels: map[string]string{"app": "web", "tier": "front"}},
		obj{ns: "a", name: "web-2", uid: "2", labels: map[string]string{"app": "web"}},
		obj{ns: "a", name: "db-1", uid: "3", labels: map[string]string{"app": "db"}},
		obj{ns: "b", name: "plain", uid: "4"},
	)
	tests := []struct {
		name      string
		namespace string
		label     string
		field     string
		want      []string
	}{
		{name: "everything, ordered by namespace then name", want: []string{"a/db-1", "a/web-2", "b/plain", "b/web-1"}},
		{name: "one namespace", namespace: "b", want: []string{"b/plain", "b/web-1"}},
		{name: "label equality", label: "app=web", want: []string{"a/web-2", "b/web-1"}},
		{name: "label set and namespace", label: "app in (web,db)", namespace: "a", want: []string{"a/db-1", "a/web-2"}},
		{name: "label absent", label: "!app", want: []string{"b/plain"}},
		{name: "label inequality keeps unlabelled", label: "app!=web", want: []string{"a/db-1", "b/plain"}},
		{name: "two labels", label: "app=web,tier=front", want: []string{"b/web-1"}},
		{name: "field name", field: "metadata.name=web-2", want: []string{"a/web-2"}},
		{name: "field namespace", field: "metadata.namespace=b", want: []string{"b/plain", "b/web-1"}},
		{name: "field inequality", field: "metadata.namespace!=b", want: []string{"a/db-1", "a/web-2"}},
		{name: "field and label", field: "metadata.namespace=b", label: "app", want: []string{"b/web-1"}},
		{name: "field contradicting namespace", namespace: "a", field: "metadata.namespace=b", want: []string{}},
		{name: "nothing matches", label: "app=cache", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			label, err := labels.Parse(tt.label)
			if err != nil {
				t.Fatal(err)
			}
			field, err := fields.ParseSelector(tt.field)
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.store.List(ListOptions{Plural: vms, Namespace: tt.namespace, Label: label, Fields: field})
			if err != nil {
				t.Fatalf("List() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, names(got.Items)); diff != "" {
				t.Errorf("List() items (-want +got):\n%s", diff)
			}
			if got.Continue != "" {
				t.Errorf("List() Continue = %q without a limit", got.Continue)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		opts ListOptions
	}{
		{"unsupported field", ListOptions{Plural: vms, Fields: fields.OneTermEqualSelector("spec.className", "small")}},
		{"no plural", ListOptions{}},
		{"garbage continue", ListOptions{Plural: vms, Continue: "not a token!"}},
		{"continue without key", ListOptions{Plural: vms, Continue: encodeContinue(continueToken{RV: "1.1"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := h.store.List(tt.opts); !errors.Is(err, ErrInvalid) {
				t.Errorf("List(%+v) error = %v, want ErrInvalid", tt.opts, err)
			}
		})
	}
}

func TestListPaging(t *testing.T) {
	h := newHarness(t)
	var objs []obj
	for i := range 7 {
		objs = append(objs, obj{ns: fmt.Sprintf("ns%d", i%2), name: fmt.Sprintf("vm-%d", i), uid: fmt.Sprint(i),
			labels: map[string]string{"even": fmt.Sprint(i%2 == 0)}})
	}
	seed(h, objs...)

	t.Run("limit 3", func(t *testing.T) {
		pages := listAll(t, h.store, ListOptions{Plural: vms, Limit: 3})
		want := [][]string{{"ns0/vm-0", "ns0/vm-2", "ns0/vm-4"}, {"ns0/vm-6", "ns1/vm-1", "ns1/vm-3"}, {"ns1/vm-5"}}
		if diff := cmp.Diff(want, pages); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
	t.Run("limit with label selector", func(t *testing.T) {
		pages := listAll(t, h.store, ListOptions{Plural: vms, Limit: 2, Label: labels.SelectorFromSet(labels.Set{"even": "true"})})
		want := [][]string{{"ns0/vm-0", "ns0/vm-2"}, {"ns0/vm-4", "ns0/vm-6"}}
		if diff := cmp.Diff(want, pages); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
	t.Run("later pages keep the first page's RV", func(t *testing.T) {
		first, err := h.store.List(ListOptions{Plural: vms, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		seed(h, obj{ns: "ns1", name: "vm-9", uid: "9"}) // the read model moves on between pages
		second, err := h.store.List(ListOptions{Plural: vms, Limit: 4, Continue: first.Continue})
		if err != nil {
			t.Fatal(err)
		}
		if second.RV != first.RV || h.store.RV() == first.RV {
			t.Errorf("page RVs %s then %s (store now at %s), want the first page's RV repeated", first.RV, second.RV, h.store.RV())
		}
		if diff := cmp.Diff([]string{"ns1/vm-1", "ns1/vm-3", "ns1/vm-5", "ns1/vm-9"}, names(second.Items)); diff != "" {
			t.Errorf("second page (-want +got):\n%s", diff)
		}
	})
}

// listAll follows continue tokens and returns the names page by page.
func listAll(t *testing.T, s *Store, o ListOptions) [][]string {
	t.Helper()
	var pages [][]string
	for range 100 {
		res, err := s.List(o)
		if err != nil {
			t.Fatalf("List(%+v) error = %v", o, err)
		}
		if int64(len(res.Items)) > o.Limit {
			t.Fatalf("List() returned %d items, limit %d", len(res.Items), o.Limit)
		}
		pages = append(pages, names(res.Items))
		if res.Continue == "" {
			return pages
		}
		o.Continue = res.Continue
	}
	t.Fatal("List() keeps returning continue tokens")
	return nil
}
