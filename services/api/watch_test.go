package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// watchFrom opens a watch from rv over HTTP and delivers its events until the test ends.
func (g *gateway) watchFrom(path, rv string) <-chan watchEvent {
	g.t.Helper()
	return g.watchQuery(path, url.Values{"resourceVersion": {rv}})
}

// watchQuery opens a watch with the given query and delivers its events until the test ends.
func (g *gateway) watchQuery(path string, q url.Values) <-chan watchEvent {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g.t.Cleanup(cancel)
	q.Set("watch", "true")
	req, err := http.NewRequestWithContext(ctx, "GET", g.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	client := *g.client
	client.Timeout = 0
	resp, err := client.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		g.t.Fatalf("watch %s: %d", q.Encode(), resp.StatusCode)
	}
	out := make(chan watchEvent, 100)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		dec := json.NewDecoder(resp.Body)
		for {
			var ev watchEvent
			if err := dec.Decode(&ev); err != nil {
				return
			}
			out <- ev
		}
	}()
	return out
}

func next(t *testing.T, events <-chan watchEvent) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watchEvent{}
}

// A watch resumed from a list's resourceVersion sees exactly what happened after the
// list, in order, then live changes.
func TestWatchResumesFromResourceVersion(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	createClass(t, g)
	_, body := g.do("GET", classes, adminToken, nil)
	listRV := field(decode(t, body), "metadata", "resourceVersion").(string)

	other := strings.Replace(seedClass, "name: my-vm-class", "name: other-class", 1)
	if code, resp := g.do("POST", classes, adminToken, other, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"changed"}}`, "Content-Type", "application/merge-patch+json")

	events := g.watchFrom(classes, listRV)
	for _, want := range []struct{ typ, name string }{{"ADDED", "other-class"}, {"MODIFIED", "my-vm-class"}} {
		ev := next(t, events)
		if ev.Type != want.typ || field(ev.Object, "metadata", "name") != want.name {
			t.Fatalf("event %s %v, want %s %s", ev.Type, field(ev.Object, "metadata", "name"), want.typ, want.name)
		}
	}
	g.do("DELETE", classes+"/other-class", adminToken, nil)
	if ev := next(t, events); ev.Type != "DELETED" || field(ev.Object, "metadata", "name") != "other-class" {
		t.Fatalf("live event %s %v, want DELETED other-class", ev.Type, field(ev.Object, "metadata", "name"))
	}
}

func TestListPagesWithLimitAndContinue(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	for _, name := range []string{"a-class", "b-class", "c-class"} {
		body := strings.Replace(seedClass, "name: my-vm-class", "name: "+name, 1)
		if code, resp := g.do("POST", classes, adminToken, body, "Content-Type", "application/yaml"); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, resp)
		}
	}
	var names []string
	cont := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		_, body := g.do("GET", classes+"?limit=2&continue="+url.QueryEscape(cont), adminToken, nil)
		list := decode(t, body)
		items := list["items"].([]any)
		if len(items) > 2 {
			t.Fatalf("page of %d items, limit 2", len(items))
		}
		for _, it := range items {
			names = append(names, field(it.(map[string]any), "metadata", "name").(string))
		}
		cont, _ = field(list, "metadata", "continue").(string)
		if cont == "" {
			break
		}
	}
	if got := strings.Join(names, ","); got != "a-class,b-class,c-class" {
		t.Errorf("paged names = %s", got)
	}
}

// A watch event's resourceVersion adds where the read model stood to the object's version:
// a client may write the object back with it (the write reads the object's version), ask
// a get or a watch to be at least that fresh, and resume its watch after exactly that
// event; a write over a version since replaced is still a conflict.
func TestWatchEventResourceVersionIsUsable(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	created := createClass(t, g)
	events := g.watchFrom(classes, field(created, "metadata", "resourceVersion").(string))
	g.do("PATCH", classes+"/my-vm-class", adminToken, `{"spec":{"description":"patched"}}`, "Content-Type", "application/merge-patch+json")
	ev := next(t, events)
	rv, _ := field(ev.Object, "metadata", "resourceVersion").(string)
	if ev.Type != "MODIFIED" || strings.Count(rv, ".") != 3 {
		t.Fatalf("event %s with resourceVersion %q, want MODIFIED with the object's version and the read model's position", ev.Type, rv)
	}
	if code, body := g.do("GET", classes+"/my-vm-class?resourceVersion="+rv, adminToken, nil); code != http.StatusOK {
		t.Fatalf("get at the event's resourceVersion: %d %s", code, body)
	}

	resumed := g.watchFrom(classes, rv)
	spec := ev.Object["spec"].(map[string]any)
	spec["description"] = "written back"
	if code, body := g.do("PUT", classes+"/my-vm-class", adminToken, ev.Object); code != http.StatusOK {
		t.Fatalf("update with the event's object: %d %s", code, body)
	}
	if code, body := g.do("PUT", classes+"/my-vm-class", adminToken, ev.Object); code != http.StatusConflict {
		t.Fatalf("update again with the event's replaced version: %d %s, want 409", code, body)
	}
	got := next(t, resumed)
	if got.Type != "MODIFIED" || field(got.Object, "spec", "description") != "written back" {
		t.Fatalf("first event after the resumed one: %s %v, want the update", got.Type, got.Object["spec"])
	}
}
