package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vmop/vmop/services/api"
)

// A watch-list (client-go's informers by default): the current objects as ADDED, then a
// bookmark marking the end of the initial events at the list's resourceVersion, then
// live changes.
func TestWatchListSendsInitialEventsThenBookmark(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	createClass(t, g)
	_, body := g.do("GET", classes, adminToken, nil)
	listRV := field(decode(t, body), "metadata", "resourceVersion").(string)

	events := g.watchQuery(classes, url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "resourceVersion": {listRV}})
	if ev := next(t, events); ev.Type != "ADDED" || field(ev.Object, "metadata", "name") != "my-vm-class" {
		t.Fatalf("first event %s %v, want ADDED my-vm-class", ev.Type, field(ev.Object, "metadata", "name"))
	}
	ev := next(t, events)
	if ev.Type != "BOOKMARK" || field(ev.Object, "metadata", "annotations", "k8s.io/initial-events-end") != "true" ||
		field(ev.Object, "metadata", "resourceVersion") != listRV || ev.Object["kind"] != "VirtualMachineClass" {
		t.Fatalf("second event %s %v, want the initial-events-end BOOKMARK of a VirtualMachineClass at %s", ev.Type, ev.Object, listRV)
	}
	g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"changed"}}`, "Content-Type", "application/merge-patch+json")
	if ev := next(t, events); ev.Type != "MODIFIED" || field(ev.Object, "spec", "description") != "changed" {
		t.Fatalf("live event %s %v, want MODIFIED with the new description", ev.Type, ev.Object)
	}

	// Without allowWatchBookmarks the initial events end with no bookmark, as in Kubernetes.
	plain := g.watchQuery(classes, url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}})
	next(t, plain)
	g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"again"}}`, "Content-Type", "application/merge-patch+json")
	if ev := next(t, plain); ev.Type != "MODIFIED" {
		t.Fatalf("event after the initial ones without allowWatchBookmarks: %s, want MODIFIED", ev.Type)
	}
}

// allowWatchBookmarks: periodic bookmarks with a resourceVersion to resume from.
func TestWatchPeriodicBookmarks(t *testing.T) {
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) { c.WatchBookmarkInterval = 50 * time.Millisecond })
	createClass(t, g)
	_, body := g.do("GET", classes, adminToken, nil)
	listRV := field(decode(t, body), "metadata", "resourceVersion").(string)

	events := g.watchQuery(classes, url.Values{"allowWatchBookmarks": {"true"}, "resourceVersion": {listRV}})
	ev := next(t, events)
	if ev.Type != "BOOKMARK" || field(ev.Object, "metadata", "annotations") != nil {
		t.Fatalf("event %s %v, want a plain BOOKMARK", ev.Type, ev.Object)
	}
	rv, _ := field(ev.Object, "metadata", "resourceVersion").(string)
	if code, resp := g.do("GET", classes+"?watch=true&timeoutSeconds=1&resourceVersion="+rv, adminToken, nil); code != http.StatusOK {
		t.Errorf("watch from the bookmark's resourceVersion %q: %d %s", rv, code, resp)
	}
}

// Bad list and watch options are answered as kube-apiserver answers them, and a list
// names its freshness through resourceVersion and resourceVersionMatch.
func TestListWatchOptions(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	createClass(t, g)
	_, body := g.do("GET", classes, adminToken, nil)
	oldRV := field(decode(t, body), "metadata", "resourceVersion").(string)
	other := strings.Replace(seedClass, "name: my-vm-class", "name: other-class", 1)
	if code, resp := g.do("POST", classes, adminToken, other, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	_, body = g.do("GET", classes, adminToken, nil)
	newRV := field(decode(t, body), "metadata", "resourceVersion").(string)

	tests := []struct {
		query string
		code  int
		msg   string
	}{
		{"watch=true&resourceVersion=abc", 400, `invalid resource version: resourceVersion: Invalid value: "abc"`},
		{"resourceVersion=12", 400, `invalid resource version: resourceVersion: Invalid value: "12"`},
		{"watch=true&timeoutSeconds=soon", 400, `parsing "soon": invalid syntax`},
		{"watch=true&sendInitialEvents=true", 422, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{"watch=true&resourceVersion=" + oldRV + "&resourceVersionMatch=NotOlderThan", 422, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{"watch=true&sendInitialEvents=true&resourceVersionMatch=Exact", 422, "Unsupported value"},
		{"sendInitialEvents=true", 422, "sendInitialEvents is forbidden for list"},
		{"resourceVersionMatch=NotOlderThan", 422, "resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"resourceVersionMatch=Exact&resourceVersion=0", 422, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"limit=-1", 400, "limit must be a non-negative integer"},
		{"limit=1&continue=x&resourceVersion=" + oldRV, 400, "specifying resource version is not allowed when using continue"},
		{"resourceVersion=" + oldRV + "&resourceVersionMatch=Exact", 410, "too old resource version"},
		{"resourceVersion=" + newRV + "&resourceVersionMatch=Exact", 200, ""},
		{"resourceVersion=" + oldRV + "&resourceVersionMatch=NotOlderThan", 200, ""},
		{"resourceVersion=" + oldRV, 200, ""},
		{"resourceVersion=999999.0&resourceVersionMatch=NotOlderThan", 504, "Too large resource version"},
	}
	for _, tt := range tests {
		code, resp := g.do("GET", classes+"?"+tt.query, adminToken, nil)
		got := decode(t, resp)
		msg, _ := got["message"].(string)
		if code != tt.code || !strings.Contains(msg, tt.msg) {
			t.Errorf("GET ?%s: %d %s, want %d with %q", tt.query, code, resp, tt.code, tt.msg)
			continue
		}
		if code == http.StatusOK {
			if rv := field(got, "metadata", "resourceVersion"); rv != newRV {
				t.Errorf("GET ?%s: list at %v, want the newest %s", tt.query, rv, newRV)
			}
		} else if got["kind"] != "Status" {
			t.Errorf("GET ?%s answered a %v, want a Status", tt.query, got["kind"])
		}
	}
}

// A GET names its freshness as kube-apiserver's does: a malformed resourceVersion is 400,
// one the read model has not reached is waited for (504 when it does not come), "0" and
// one reached are answered at once.
func TestGetHonoursResourceVersion(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	created := createClass(t, g)
	rv := field(created, "metadata", "resourceVersion").(string)
	name := field(created, "metadata", "name").(string)
	for _, tt := range []struct {
		rv   string
		code int
		msg  string
	}{
		{"abc", 400, `invalid resource version: resourceVersion: Invalid value: "abc"`},
		{"999999.0", 504, "Too large resource version"},
		{"0", 200, ""},
		{rv, 200, ""},
	} {
		code, resp := g.do("GET", classes+"/"+name+"?resourceVersion="+tt.rv, adminToken, nil)
		got := decode(t, resp)
		if msg, _ := got["message"].(string); code != tt.code || !strings.Contains(msg, tt.msg) {
			t.Errorf("GET ?resourceVersion=%s: %d %s, want %d with %q", tt.rv, code, resp, tt.code, tt.msg)
		}
	}
}
