package readmodel

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
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

// JetStream lost the last writes the read model had folded (a power loss before they
// reached the disk), and new writes took their sequences: the read model notices that
// its checkpoint is another message now and rebuilds itself from the streams, under a
// new epoch, instead of resuming in the middle of another history.
func TestDivergedStreamsRebuildTheReadModel(t *testing.T) {
	h := newHarness(t)
	web := obj{ns: "ns1", name: "web", uid: "web", spec: map[string]any{"v": 1}}
	lost := obj{ns: "ns1", name: "lost", uid: "lost"}
	h.put(web)
	h.status(web, "power", "web", false, `{"powerState":"PoweredOn"}`)
	h.waitSpec(h.put(lost))
	h.waitStatus(h.status(lost, "power", "lost", false, `{"powerState":"PoweredOff"}`))
	h.reopen()
	if got := h.store.Epoch(); got == "" {
		t.Fatal("Epoch() is empty")
	}
	h.waitCaughtUp()
	epoch, rv := h.store.Epoch(), h.store.RV()
	h.close()

	// The same streams without the last writes, then other writes at their positions.
	h.js, _ = eventstest.JetStream(t)
	h.last = map[events.Ref]uint64{}
	h.put(web)
	h.status(web, "power", "web", false, `{"powerState":"PoweredOn"}`)
	other := obj{ns: "ns1", name: "other", uid: "other", labels: map[string]string{"app": "db"}}
	h.put(other)
	web.spec["v"] = 2
	lastSpec := h.put(web)
	lastStatus := h.status(other, "network", "other", false, `{"network":{"primaryIP4":"10.0.0.9"}}`)

	h.open()
	h.fold()
	defer h.close() // before the second server's connection closes
	h.waitSpec(lastSpec)
	h.waitStatus(lastStatus)
	h.waitCaughtUp()
	if h.store.Epoch() == epoch {
		t.Errorf("Epoch() = %s after the rebuild, the epoch before", epoch)
	}
	h.notFound(lost)
	if _, err := h.store.Watch(t.Context(), WatchOptions{Plural: vms, FromRV: rv}); !errors.Is(err, ErrGone) {
		t.Errorf("Watch from %s, a resourceVersion of the lost history = %v, want ErrGone", rv, err)
	}
	if _, err := h.store.Watch(t.Context(), WatchOptions{Plural: vms, FromRV: h.store.RV()}); err != nil {
		t.Errorf("Watch from the rebuilt list RV %s = %v", h.store.RV(), err)
	}

	// A projection folded from nothing out of the same streams is identical.
	fresh := &harness{t: t, js: h.js, path: filepath.Join(t.TempDir(), "fresh.db")}
	fresh.open()
	fresh.fold()
	defer fresh.close()
	fresh.waitSpec(lastSpec)
	fresh.waitStatus(lastStatus)
	if diff := cmp.Diff(snapshotAll(t, fresh), snapshotAll(t, h)); diff != "" {
		t.Errorf("rebuilt read model differs from a fresh one (-fresh +rebuilt):\n%s", diff)
	}
}

// Restarting on streams that still hold the folded history keeps the epoch and the
// change log: watches resume.
func TestRestartKeepsTheEpoch(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "vm", uid: "vm"}
	first := h.put(vm)
	h.waitSpec(first)
	rv := h.store.RV()
	epoch := h.store.Epoch()
	second := h.put(vm)
	h.reopen()
	h.waitSpec(second)
	if got := h.store.Epoch(); got != epoch {
		t.Errorf("Epoch() = %s after a restart, want %s", got, epoch)
	}
	changes := h.watch(WatchOptions{FromRV: rv})
	if got, want := collect(t, changes, 1), []event{{Modified, "vm", fmt.Sprintf("%d.0", second)}}; !cmp.Equal(got, want) {
		t.Errorf("watch from %s after the restart = %v, want %v", rv, got, want)
	}
}

// A file of another schema version is emptied and folded again, under a new epoch.
func TestOpenRebuildsAFileOfAnotherSchemaVersion(t *testing.T) {
	h := newHarness(t)
	vm := obj{ns: "ns1", name: "vm", uid: "vm"}
	h.waitSpec(h.put(vm))
	epoch := h.store.Epoch()
	h.close()
	db, err := sql.Open("sqlite3", h.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	h.open()
	h.fold()
	h.waitCaughtUp()
	if got := h.get(vm); got.UID != "vm" {
		t.Errorf("object after the rebuild = %s", got.JSON)
	}
	if h.store.Epoch() == epoch {
		t.Errorf("Epoch() = %s, the epoch of the other schema's file", epoch)
	}
}
