package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "github.com/mattn/go-sqlite3" // the announcer's state file
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
)

// A VirtualMachine's life is announced on EVENTS in order, once, although two gateway
// replicas announce it; restarting a gateway, even on a rebuilt read model, announces
// nothing again.
func TestAnnouncerPublishesVirtualMachineLife(t *testing.T) {
	js, nc := eventstest.JetStream(t)
	published, err := nc.SubscribeSync("vmop.events.virtualmachines.>") // every publish, duplicates included
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, js, t.TempDir())
	replica := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, g, replica)
	const replicas = 2
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}

	var want []string // event types so far
	// step does something and waits until both replicas announced the events it makes,
	// so that both fold the same sequence of changes.
	step := func(what string, do func(), types ...string) {
		t.Helper()
		do()
		want = append(want, types...)
		waitPublished(t, published, replicas*len(types))
		var stored []storedEvent
		eventually(t, what+" stored", func() bool { // a subscriber may see a publish before the stream stored it
			stored = storedEvents(t, js)
			return len(stored) >= len(want)
		})
		var got []string
		for _, e := range stored {
			got = append(got, e.Type)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("after %s: EVENTS types (-want +got):\n%s", what, diff)
		}
	}
	var uid string
	step("create", func() {
		code, body := g.do("POST", vms, adminToken, ownedVM, "Content-Type", "application/yaml")
		if code != http.StatusCreated {
			t.Fatalf("create VM: %d %s", code, body)
		}
		uid = field(decode(t, body), "metadata", "uid").(string)
	}, events.TypeVirtualMachineCreated)
	step("a condition appears", func() { placementCondition(t, js, uid, "False", "Pending") },
		events.TypeVirtualMachineConditionChanged)
	step("the condition changes", func() { placementCondition(t, js, uid, "True", "Created") },
		events.TypeVirtualMachineConditionChanged)
	step("the spec changes, then an annotation (no news)", func() {
		if code, body := g.do("PATCH", vms+"/owned-vm", adminToken, `{"spec":{"powerState":"PoweredOff"}}`,
			"Content-Type", "application/merge-patch+json"); code != http.StatusOK {
			t.Fatalf("patch spec: %d %s", code, body)
		}
		if code, body := g.do("PATCH", vms+"/owned-vm", adminToken,
			`{"metadata":{"annotations":{"delete.check.vmoperator.vmware.com/backup":"running"}}}`,
			"Content-Type", "application/merge-patch+json"); code != http.StatusOK {
			t.Fatalf("patch annotations: %d %s", code, body)
		}
	}, events.TypeVirtualMachineUpdated)
	step("delete", func() {
		if code, body := g.do("DELETE", vms+"/owned-vm", adminToken, nil); code != http.StatusOK {
			t.Fatalf("delete: %d %s", code, body)
		}
	}, events.TypeVirtualMachineDeleting, events.TypeVirtualMachineDeleteBlocked)
	step("the delete check is removed", func() {
		if code, body := g.do("PATCH", vms+"/owned-vm", adminToken,
			`{"metadata":{"annotations":{"delete.check.vmoperator.vmware.com/backup":null}}}`,
			"Content-Type", "application/merge-patch+json"); code != http.StatusOK {
			t.Fatalf("remove the delete check: %d %s", code, body)
		}
	}, events.TypeVirtualMachineDeleteUnblocked)
	step("every owner releases", func() {
		for _, svc := range []string{model.ServicePlacement, model.ServicePower, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto} {
			release(t, js, svc, uid)
		}
	}, events.TypeVirtualMachineDeleted)

	stored := storedEvents(t, js)
	for i, e := range stored {
		what := e.Type[len("vmop.virtualmachine."):]
		if wantSubject := "vmop.events.virtualmachines.my-namespace.owned-vm." + what; e.subject != wantSubject {
			t.Errorf("event %d subject %q, want %q", i, e.subject, wantSubject)
		}
		if e.Source != "/vmop/namespaces/my-namespace/virtualmachines" || e.Subject != "owned-vm" || e.SpecVersion != "1.0" {
			t.Errorf("event %d envelope = %+v", i, e.CloudEvent)
		}
	}
	if got := stored[0].ID; got != uid+"/created" {
		t.Errorf("created id = %q, want %q", got, uid+"/created")
	}
	var condition struct{ Type, Status, Reason string }
	if err := json.Unmarshal(stored[2].Data, &condition); err != nil || condition.Type != model.ConditionCreated || condition.Status != "True" || condition.Reason != "Created" {
		t.Errorf("second condition event data = %s, want the condition %s True", stored[2].Data, model.ConditionCreated)
	}
	if diff := cmp.Diff(`{"checks":{"backup":"running"}}`, string(stored[5].Data)); diff != "" {
		t.Errorf("delete-blocked data (-want +got):\n%s", diff)
	}

	// A restart resumes after what was announced: the next publishes (of either
	// replica; JetStream would drop repeats, a plain subscriber would not) are the new
	// VM's.
	created := func(name string) []string {
		return []string{"vmop.events.virtualmachines.my-namespace." + name + ".created", "vmop.events.virtualmachines.my-namespace." + name + ".created"}
	}
	g = g.restart()
	createNamedVM(t, g, "after-restart")
	if diff := cmp.Diff(created("after-restart"), waitPublished(t, published, replicas)); diff != "" {
		t.Errorf("published after the restart (-want +got):\n%s", diff)
	}
	// A rebuilt read model folds the same stream positions: still nothing again.
	g = g.rebuild()
	createNamedVM(t, g, "after-rebuild")
	if diff := cmp.Diff(created("after-rebuild"), waitPublished(t, published, replicas)); diff != "" {
		t.Errorf("published after the rebuild (-want +got):\n%s", diff)
	}
	// A new replica takes what exists as announced: it announces only what happens next.
	newcomer := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, newcomer)
	createNamedVM(t, g, "after-new-replica")
	if diff := cmp.Diff(append(created("after-new-replica"), created("after-new-replica")[0]),
		waitPublished(t, published, replicas+1)); diff != "" {
		t.Errorf("published after a new replica joined (-want +got):\n%s", diff)
	}
	var got []string
	eventually(t, "the last event stored", func() bool {
		got = nil
		for _, e := range storedEvents(t, js)[len(want):] {
			got = append(got, e.subject)
		}
		return len(got) >= 3
	})
	if diff := cmp.Diff([]string{
		"vmop.events.virtualmachines.my-namespace.after-restart.created",
		"vmop.events.virtualmachines.my-namespace.after-rebuild.created",
		"vmop.events.virtualmachines.my-namespace.after-new-replica.created",
	}, got); diff != "" {
		t.Errorf("events after the restarts (-want +got):\n%s", diff)
	}
}

// waitAnnouncing waits until the gateways' announcers follow live changes: a new
// announcer first takes the existing objects as announced, and a VM created meanwhile
// could be taken for one of them.
func waitAnnouncing(t *testing.T, gateways ...*gateway) {
	t.Helper()
	for _, g := range gateways {
		path := filepath.Join(g.dir, "api", "announcer.db")
		eventually(t, "announcer of "+g.dir+" live", func() bool {
			db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
			if err != nil {
				return false
			}
			defer db.Close()
			var n int
			return db.QueryRow(`SELECT COUNT(*) FROM cursor`).Scan(&n) == nil && n == 1
		})
	}
}

// placementCondition publishes placement's slice with one VirtualMachineCreated condition.
func placementCondition(t *testing.T, js jetstream.JetStream, uid, status, reason string) {
	t.Helper()
	st, err := json.Marshal(map[string]any{"conditions": []map[string]any{{
		"type": model.ConditionCreated, "status": status, "reason": reason, "message": "",
		"observedGeneration": 1, "lastTransitionTime": "2025-01-01T00:00:00Z",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "owned-vm"}
	if _, err := events.PublishStatus(context.Background(), js, ref, events.Slice{
		Service: model.ServicePlacement, UID: uid, Generation: 1, Status: st,
	}); err != nil {
		t.Fatal(err)
	}
}

func createNamedVM(t *testing.T, g *gateway, name string) {
	t.Helper()
	vm := fmt.Sprintf(`{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":%q},
		"spec":{"className":"my-vm-class","image":{"kind":"VirtualMachineImage","name":"vmi-0a0044d7c690bcbea"},"storageClass":"my-storage-class"}}`, name)
	if code, body := g.do("POST", vms, adminToken, vm); code != http.StatusCreated {
		t.Fatalf("create VM %s: %d %s", name, code, body)
	}
}

// waitPublished waits for n more events published on vmop.events.virtualmachines.> and
// returns their subjects.
func waitPublished(t *testing.T, sub *nats.Subscription, n int) []string {
	t.Helper()
	var subjects []string
	for i := range n {
		m, err := sub.NextMsg(20 * time.Second)
		if err != nil {
			t.Fatalf("waiting for published event %d of %d: %v", i+1, n, err)
		}
		subjects = append(subjects, m.Subject)
	}
	return subjects
}

// storedEvent is one CloudEvent in EVENTS and its subject.
type storedEvent struct {
	events.CloudEvent
	subject string
}

// storedEvents reads EVENTS from the start.
func storedEvents(t *testing.T, js jetstream.JetStream) []storedEvent {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, events.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedEvent
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var e storedEvent
		if err := json.Unmarshal(m.Data, &e.CloudEvent); err != nil {
			t.Fatalf("EVENTS message %d is no CloudEvent: %v", seq, err)
		}
		e.subject = m.Subject
		out = append(out, e)
	}
}

// Without its cursor (the change log no longer reaches back to it), the announcer compares
// the current objects with what it announced: what appeared is created, what went is
// deleted, and what it announced already is not announced again.
func TestAnnouncerWithoutCursorAnnouncesTheDifference(t *testing.T) {
	js, nc := eventstest.JetStream(t)
	published, err := nc.SubscribeSync("vmop.events.virtualmachines.>")
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, g)
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	createNamedVM(t, g, "kept")
	createNamedVM(t, g, "removed")
	waitPublished(t, published, 2)

	// While the gateway is down, one VM appears and one goes.
	g.stop()
	g.stop = nil
	ctx := context.Background()
	added := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "added"}
	body := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":"added","namespace":"my-namespace","uid":"uid-added","generation":1},"spec":{}}`
	if _, err := events.AppendSpec(ctx, js, added, events.OpPut, []byte(body), 0, nil); err != nil {
		t.Fatal(err)
	}
	removed := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "removed"}
	last, err := events.LastSpec(ctx, js, removed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(ctx, js, removed, events.OpDelete, last.Body, last.Seq, nil); err != nil {
		t.Fatal(err)
	}
	forgetCursor(t, filepath.Join(g.dir, "api", "announcer.db"))

	g = startGateway(t, js, g.dir)
	got := waitPublished(t, published, 2)
	slices.Sort(got)
	if diff := cmp.Diff([]string{
		"vmop.events.virtualmachines.my-namespace.added.created",
		"vmop.events.virtualmachines.my-namespace.removed.deleted",
	}, got); diff != "" {
		t.Errorf("published after the restart without cursor (-want +got):\n%s", diff)
	}
	// The announcer works in order: had it announced "kept" again, that would come first.
	createNamedVM(t, g, "later")
	if diff := cmp.Diff([]string{"vmop.events.virtualmachines.my-namespace.later.created"}, waitPublished(t, published, 1)); diff != "" {
		t.Errorf("published next (-want +got):\n%s", diff)
	}
}

// forgetCursor removes the announcer's cursor from its state file, keeping what it announced.
func forgetCursor(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`DELETE FROM cursor`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("deleted %d cursors (%v), want 1", n, err)
	}
}

// An event no retry can publish (here: the VM admission accepted has grown, with the
// status its services report, past what fits in a NATS message) is recorded in the
// announcer's state and skipped; the events after it are published.
func TestAnnouncerSkipsAnEventItCannotPublish(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		MaxPayload: 64 << 10, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	js, nc := eventstest.Connect(t, ns)
	published, err := nc.SubscribeSync("vmop.events.virtualmachines.>")
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, js, t.TempDir()) // it sets up the streams
	waitAnnouncing(t, g)
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	big := fmt.Sprintf(`{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":"owned-vm","annotations":{"note":%q}},
		"spec":{"className":"my-vm-class","image":{"kind":"VirtualMachineImage","name":"vmi-0a0044d7c690bcbea"},"storageClass":"my-storage-class"}}`,
		strings.Repeat("x", int(nc.MaxPayload())*7/8))
	code, body := g.do("POST", vms, adminToken, big)
	if code != http.StatusCreated {
		t.Fatalf("create VM: %.300s %d", body, code)
	}
	uid := field(decode(t, body), "metadata", "uid").(string)
	waitPublished(t, published, 1) // created
	// Placement reports a condition with a long message: object and status together no
	// longer fit in one message, while each record does.
	placementCondition(t, js, uid, "False", strings.Repeat("y", int(nc.MaxPayload())/4))
	waitPublished(t, published, 1) // conditionchanged carries the condition only

	if code, body := g.do("DELETE", vms+"/owned-vm", adminToken, nil); code != http.StatusOK {
		t.Fatalf("delete: %d %.300s", code, body)
	}
	createNamedVM(t, g, "after")
	if diff := cmp.Diff([]string{"vmop.events.virtualmachines.my-namespace.after.created"}, waitPublished(t, published, 1)); diff != "" {
		t.Errorf("published after the event too large (-want +got):\n%s", diff)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(g.dir, "api", "announcer.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id, typ, name, cause string
	if err := db.QueryRow(`SELECT id, type, name, error FROM skipped`).Scan(&id, &typ, &name, &cause); err != nil {
		t.Fatalf("the skipped event is not recorded: %v", err)
	}
	if id != uid+"/deleting" || typ != events.TypeVirtualMachineDeleting || name != "owned-vm" || !strings.Contains(cause, "maximum payload") {
		t.Errorf("skipped = %s %s %s %q, want the deleting event of owned-vm, too large", id, typ, name, cause)
	}
}

// The streams lost what the gateway had announced from (here: another server's streams
// hold an older history), so the read model rebuilds itself under a new epoch and the
// announcer's cursor belongs to no position of the streams: it neither resumes from it
// nor takes the current objects as announced, but announces the difference between what
// it announced and what the streams hold.
func TestAnnouncerOnDivergedStreamsAnnouncesTheDifference(t *testing.T) {
	js, firstNC := eventstest.JetStream(t)
	announced, err := firstNC.SubscribeSync("vmop.events.virtualmachines.>")
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, g)
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	createNamedVM(t, g, "kept")
	createNamedVM(t, g, "lost")
	// Both must be announced before the gateway stops: a stop may come before the
	// announcer saw a change, and a VM never announced is rightly not announced gone.
	// An announcer that published an event records it even when stopped meanwhile.
	if diff := cmp.Diff([]string{
		"vmop.events.virtualmachines.my-namespace.kept.created",
		"vmop.events.virtualmachines.my-namespace.lost.created",
	}, waitPublished(t, announced, 2)); diff != "" {
		t.Fatalf("published before the streams diverged (-want +got):\n%s", diff)
	}
	g.stop()
	g.stop = nil

	ctx := context.Background()
	diverged, nc := eventstest.JetStream(t)
	published, err := nc.SubscribeSync("vmop.events.virtualmachines.>")
	if err != nil {
		t.Fatal(err)
	}
	kept := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "kept"}
	rec, err := events.LastSpec(ctx, js, kept)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(ctx, diverged, kept, events.OpPut, rec.Body, 0, nil); err != nil {
		t.Fatal(err)
	}
	added := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "added"}
	body := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":"added","namespace":"my-namespace","uid":"uid-added","generation":1},"spec":{}}`
	if _, err := events.AppendSpec(ctx, diverged, added, events.OpPut, []byte(body), 0, nil); err != nil {
		t.Fatal(err)
	}

	g = startGateway(t, diverged, g.dir)
	got := waitPublished(t, published, 2)
	slices.Sort(got)
	if diff := cmp.Diff([]string{
		"vmop.events.virtualmachines.my-namespace.added.created",
		"vmop.events.virtualmachines.my-namespace.lost.deleted",
	}, got); diff != "" {
		t.Errorf("published on the diverged streams (-want +got):\n%s", diff)
	}
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	createNamedVM(t, g, "later")
	if diff := cmp.Diff([]string{"vmop.events.virtualmachines.my-namespace.later.created"}, waitPublished(t, published, 1)); diff != "" {
		t.Errorf("published next (-want +got):\n%s", diff)
	}
}

// An announcer that had announced nothing (here: no VM existed) before the streams
// diverged is not a new replica: its cursor of the other history says it announced
// everything up to there, so what the new history holds was never announced and is.
func TestAnnouncerOnDivergedStreamsAnnouncesWhatItHadNotAnnounced(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	g := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, g)
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	g.stop()
	g.stop = nil

	diverged, nc := eventstest.JetStream(t) // it ends before the read model's position
	published, err := nc.SubscribeSync("vmop.events.virtualmachines.>")
	if err != nil {
		t.Fatal(err)
	}
	added := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "added"}
	body := `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":"added","namespace":"my-namespace","uid":"uid-added","generation":1},"spec":{}}`
	if _, err := events.AppendSpec(context.Background(), diverged, added, events.OpPut, []byte(body), 0, nil); err != nil {
		t.Fatal(err)
	}

	startGateway(t, diverged, g.dir)
	if diff := cmp.Diff([]string{"vmop.events.virtualmachines.my-namespace.added.created"}, waitPublished(t, published, 1)); diff != "" {
		t.Errorf("published on the diverged streams (-want +got):\n%s", diff)
	}
}
