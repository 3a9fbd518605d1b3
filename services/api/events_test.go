package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/vmop/vmop/pkg/events"
)

const coreEvents = "/api/v1/namespaces/my-namespace/events"

// TestEventsServeTheEventsStream: the VM's events as kubectl describe asks for them
// (protobuf, a field selector on involvedObject), in both groups, as a Table, watched,
// read-only, and only in the caller's namespaces.
func TestEventsServeTheEventsStream(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	waitAnnouncing(t, g)
	if code, body := g.do("POST", "/apis/storage.k8s.io/v1/storageclasses", adminToken, storageClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create storage class: %d %s", code, body)
	}
	createNamedVM(t, g, "ev-vm")
	_, body := g.do("GET", vms+"/ev-vm", adminToken, nil)
	uid := field(decode(t, body), "metadata", "uid").(string)
	// The announcer's Created comes first on EVENTS, then power's PoweredOn, as in the stack.
	g.eventually("the announcer's Created event", func() bool {
		_, resp := g.do("GET", coreEvents+"?fieldSelector=reason%3DCreated", adminToken, nil)
		return strings.Contains(string(resp), `"reason":"Created"`)
	})
	vm := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "ev-vm"}
	if err := events.PublishEvent(context.Background(), js, vm, events.TypeVirtualMachinePoweredOn, uid+"/poweredon/1",
		map[string]any{"powerState": "PoweredOn", "previousPowerState": "PoweredOff"}); err != nil {
		t.Fatal(err)
	}

	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := protobuf.NewSerializer(scheme, scheme)
	describe := coreEvents + "?limit=500&fieldSelector=" + url.QueryEscape(fields.Set{
		"involvedObject.name": "ev-vm", "involvedObject.namespace": "my-namespace",
		"involvedObject.kind": "VirtualMachine", "involvedObject.uid": uid,
	}.AsSelector().String())
	var list corev1.EventList
	g.eventually("the VM's Created and PoweredOn events", func() bool {
		code, resp, header := g.doHeader("GET", describe, userToken, nil, "Accept", protobufType+", application/json")
		if code != http.StatusOK || header.Get("Content-Type") != protobufType {
			t.Fatalf("describe's list: %d %s %s", code, header.Get("Content-Type"), resp)
		}
		list = corev1.EventList{}
		if _, _, err := codec.Decode(resp, nil, &list); err != nil {
			t.Fatalf("decode protobuf EventList: %v", err)
		}
		return len(list.Items) == 2
	})
	created, on := list.Items[0], list.Items[1]
	if created.Reason != "Created" || on.Reason != "PoweredOn" || on.Message != "Powered on, was PoweredOff" ||
		on.Type != corev1.EventTypeNormal || on.Source.Component != "vmop-power" || on.Count != 1 {
		t.Errorf("events = %+v", list.Items)
	}
	if ref := on.InvolvedObject; ref.Kind != "VirtualMachine" || ref.APIVersion != "vmoperator.vmware.com/v1alpha5" ||
		ref.Name != "ev-vm" || ref.Namespace != "my-namespace" || string(ref.UID) != uid {
		t.Errorf("involvedObject = %+v", ref)
	}
	if list.ResourceVersion == "" || on.ResourceVersion == "" || on.Name == "" {
		t.Errorf("list RV %q, event RV %q, name %q", list.ResourceVersion, on.ResourceVersion, on.Name)
	}

	code, resp := g.do("GET", coreEvents+"/"+on.Name, userToken, nil)
	if code != http.StatusOK || field(decode(t, resp), "reason") != "PoweredOn" {
		t.Errorf("get %s: %d %s", on.Name, code, resp)
	}
	code, resp = g.do("GET", "/apis/events.k8s.io/v1/namespaces/my-namespace/events?fieldSelector=regarding.name%3Dev-vm,reason%3DPoweredOn", userToken, nil)
	var v1list eventsv1.EventList
	if code != http.StatusOK || json.Unmarshal(resp, &v1list) != nil || len(v1list.Items) != 1 ||
		v1list.Items[0].Note != on.Message || v1list.Items[0].Regarding.Name != "ev-vm" || v1list.APIVersion != "events.k8s.io/v1" {
		t.Errorf("events.k8s.io/v1 list: %d %s", code, resp)
	}

	code, resp = g.do("GET", coreEvents, userToken, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tbl metav1.Table
	if code != http.StatusOK || json.Unmarshal(resp, &tbl) != nil {
		t.Fatalf("table: %d %s", code, resp)
	}
	var shown []string
	for _, c := range tbl.ColumnDefinitions {
		if c.Priority == 0 {
			shown = append(shown, strings.ToUpper(c.Name))
		}
	}
	if !slices.Equal(shown, []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}) || len(tbl.Rows) != 2 ||
		tbl.Rows[1].Cells[3] != "virtualmachine/ev-vm" || tbl.Rows[1].Cells[2] != "PoweredOn" {
		t.Errorf("table columns %v, rows %+v", shown, tbl.Rows)
	}

	// kubectl get events -w: a watch from the list's resourceVersion shows what follows.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", g.URL+coreEvents+"?watch=1&resourceVersion="+list.ResourceVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+userToken)
	watch, err := g.client.Do(req)
	if err != nil || watch.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", watch, err)
	}
	defer watch.Body.Close()
	if err := events.PublishEvent(ctx, js, vm, events.TypeVirtualMachinePoweredOff, uid+"/poweredoff/2",
		map[string]any{"powerState": "PoweredOff", "previousPowerState": "PoweredOn"}); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(watch.Body)
	if !lines.Scan() {
		t.Fatalf("watch ended: %v", lines.Err())
	}
	var seen struct {
		Type   string       `json:"type"`
		Object corev1.Event `json:"object"`
	}
	if err := json.Unmarshal(lines.Bytes(), &seen); err != nil || seen.Type != "ADDED" || seen.Object.Reason != "PoweredOff" {
		t.Errorf("watched %s (%v), want the ADDED PoweredOff", lines.Bytes(), err)
	}

	// An informer's watch-list: the current events, then the bookmark that ends them.
	req, err = http.NewRequestWithContext(ctx, "GET", g.URL+coreEvents+"?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"+
		"&resourceVersionMatch=NotOlderThan&resourceVersion="+list.ResourceVersion+"&fieldSelector=involvedObject.name%3Dev-vm", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+userToken)
	watchList, err := g.client.Do(req)
	if err != nil || watchList.StatusCode != http.StatusOK {
		t.Fatalf("watch-list: %v %v", watchList, err)
	}
	defer watchList.Body.Close()
	var got []string
	for lines := bufio.NewScanner(watchList.Body); len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "BOOKMARK"); {
		if !lines.Scan() {
			t.Fatalf("watch-list ended after %v: %v", got, lines.Err())
		}
		var ev struct {
			Type   string       `json:"type"`
			Object corev1.Event `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "BOOKMARK" && ev.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Errorf("bookmark without the initial-events-end annotation: %s", lines.Bytes())
		}
		got = append(got, ev.Type+" "+ev.Object.Reason)
	}
	if want := []string{"ADDED Created", "ADDED PoweredOn", "ADDED PoweredOff", "BOOKMARK "}; !slices.Equal(got, want) {
		t.Errorf("watch-list = %q, want %q", got, want)
	}

	for _, c := range []struct {
		what, method, path, token string
		code                      int
	}{
		{"create", "POST", coreEvents, adminToken, http.StatusMethodNotAllowed},
		{"delete", "DELETE", coreEvents + "/" + on.Name, adminToken, http.StatusMethodNotAllowed},
		{"patch", "PATCH", coreEvents + "/" + on.Name, adminToken, http.StatusMethodNotAllowed},
		{"another's namespace", "GET", "/api/v1/namespaces/kube-system/events", userToken, http.StatusForbidden},
		{"every namespace", "GET", "/api/v1/events", userToken, http.StatusForbidden},
		{"an unknown field", "GET", coreEvents + "?fieldSelector=spec.x%3Dy", userToken, http.StatusBadRequest},
		{"a malformed resourceVersion", "GET", coreEvents + "?watch=1&resourceVersion=x", userToken, http.StatusBadRequest},
		{"an event that is not", "GET", coreEvents + "/ev-vm.ffff", userToken, http.StatusNotFound},
	} {
		if code, resp := g.do(c.method, c.path, c.token, `{"metadata":{"name":"x"}}`); code != c.code {
			t.Errorf("%s: %d %s, want %d", c.what, code, resp, c.code)
		}
	}
	if code, resp := g.do("GET", "/api/v1/events", adminToken, nil); code != http.StatusOK || !strings.Contains(string(resp), "ev-vm") {
		t.Errorf("admin's list of every namespace: %d %s", code, resp)
	}

	var discovery metav1.APIResourceList
	_, resp = g.do("GET", "/api/v1", userToken, nil)
	if err := json.Unmarshal(resp, &discovery); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range discovery.APIResources {
		if r.Name == "events" {
			found = slices.Equal(r.Verbs, []string{"get", "list", "watch"}) && r.Namespaced
		}
	}
	if code, _ := g.do("GET", "/apis/events.k8s.io/v1", userToken, nil); !found || code != http.StatusOK {
		t.Errorf("discovery: events in /api/v1 read-only %v, /apis/events.k8s.io/v1 %d", found, code)
	}
}
