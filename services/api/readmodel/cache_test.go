package readmodel

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
)

// The label index follows every change (labels replaced, objects deleted) and is rebuilt
// from the database when the store reopens: each selector lists what a scan would.
func TestListLabelIndexFollowsChanges(t *testing.T) {
	h := newHarness(t)
	objs := make([]obj, 12)
	for i := range objs {
		objs[i] = obj{ns: fmt.Sprintf("ns%d", i%2), name: fmt.Sprintf("vm-%02d", i), uid: fmt.Sprint(i),
			labels: map[string]string{"shard": fmt.Sprintf("s%d", i%3), "app": "web"}}
	}
	seed(h, objs...)
	moved, gone := objs[3], objs[6] // both s0
	moved.labels = map[string]string{"shard": "s1", "app": "web"}
	h.put(moved)
	h.waitSpec(h.remove(gone))

	want := map[string][][]string{
		"shard=s0":            {{"ns0/vm-00", "ns1/vm-09"}},
		"shard==s1":           {{"ns0/vm-04", "ns0/vm-10", "ns1/vm-01"}, {"ns1/vm-03", "ns1/vm-07"}},
		"shard in (s0,s2)":    {{"ns0/vm-00", "ns0/vm-02", "ns0/vm-08"}, {"ns1/vm-05", "ns1/vm-09", "ns1/vm-11"}},
		"app=web,shard!=s1":   {{"ns0/vm-00", "ns0/vm-02", "ns0/vm-08"}, {"ns1/vm-05", "ns1/vm-09", "ns1/vm-11"}},
		"shard=s9":            {{}},
		"shard=s1,app=mail":   {{}},
		"shard in (s1),app":   {{"ns0/vm-04", "ns0/vm-10", "ns1/vm-01"}, {"ns1/vm-03", "ns1/vm-07"}},
		"shard in (s2,s9)":    {{"ns0/vm-02", "ns0/vm-08", "ns1/vm-05"}, {"ns1/vm-11"}},
		"!shard":              {{}},
		"shard notin (s0,s1)": {{"ns0/vm-02", "ns0/vm-08", "ns1/vm-05"}, {"ns1/vm-11"}},
	}
	check := func(t *testing.T) {
		for sel, pages := range want {
			label, err := labels.Parse(sel)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(pages, listAll(t, h.store, ListOptions{Plural: vms, Label: label, Limit: 3})); diff != "" {
				t.Errorf("%s: pages (-want +got):\n%s", sel, diff)
			}
			ns1 := [][]string{{}}
			for _, page := range pages {
				for _, name := range page {
					if name[:3] == "ns1" {
						ns1[0] = append(ns1[0], name)
					}
				}
			}
			if diff := cmp.Diff(ns1, listAll(t, h.store, ListOptions{Plural: vms, Namespace: "ns1", Label: label, Limit: 10})); diff != "" {
				t.Errorf("%s in ns1: (-want +got):\n%s", sel, diff)
			}
		}
	}
	t.Run("folded", check)
	h.reopen()
	t.Run("reopened", check)
}
