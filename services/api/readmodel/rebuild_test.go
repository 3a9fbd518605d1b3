package readmodel

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRebuildIsIdentical(t *testing.T) {
	h := newHarness(t)
	var lastSpec, lastStatus uint64
	put := func(o obj) { lastSpec = h.put(o) }
	status := func(o obj, service, uid string, released bool, s string) {
		lastStatus = h.status(o, service, uid, released, s)
	}

	// More records than SPECS keeps per object: a rebuild sees only the newest 8.
	busy := obj{ns: "ns1", name: "busy", uid: "busy", labels: map[string]string{"app": "web"}, spec: map[string]any{}}
	for i := range 12 {
		busy.spec["n"] = i
		put(busy)
		status(busy, "power", "busy", false, fmt.Sprintf(`{"n":%d}`, i))
	}
	status(busy, "placement", "busy", true, `{"conditions":[{"type":"Created"},{"type":"Ready"}]}`)

	early := obj{ns: "ns2", name: "early", uid: "early"}
	status(early, "network", "early", false, `{"network":{"primaryIP4":"10.0.0.2"}}`)
	put(early)

	gone := obj{ns: "ns1", name: "gone", uid: "gone"}
	put(gone)
	status(gone, "placement", "gone", true, `{}`)
	put(gone)
	lastSpec = h.remove(gone)

	again := obj{ns: "ns1", name: "again", uid: "first"}
	put(again)
	status(again, "power", "first", false, `{"powerState":"PoweredOn"}`)
	lastSpec = h.remove(again)
	again.uid = "second"
	put(again)
	status(again, "storage", "second", false, `{"volumes":[]}`)

	cluster := obj{name: "cluster-scoped", uid: "c"}
	put(cluster)

	h.waitSpec(lastSpec)
	h.waitStatus(lastStatus)
	before := snapshotAll(t, h)
	if len(before.Items) != 4 {
		t.Fatalf("%d objects before the rebuild, want 4: %v", len(before.Items), names(before.Items))
	}

	h.close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(h.path + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	h.open()
	h.fold()
	h.waitSpec(lastSpec)
	h.waitStatus(lastStatus)

	if diff := cmp.Diff(before, snapshotAll(t, h)); diff != "" {
		t.Errorf("rebuilt read model differs (-before +after):\n%s", diff)
	}
}

func snapshotAll(t *testing.T, h *harness) ListResult {
	t.Helper()
	res, err := h.store.List(ListOptions{Plural: vms})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
