package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/services/api"
)

// syncBuffer is a log destination the gateway's goroutines may share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Every write, allowed or not, leaves one audit line (user, verb, object, code); reads
// leave none, and no line carries the request's body.
func TestEveryWriteIsAudited(t *testing.T) {
	var logs syncBuffer
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	const secret = "s3cr3t-in-the-body"
	body := strings.Replace(seedClass, "spec:\n", "spec:\n  description: "+secret+"\n", 1)
	steps := []struct {
		method, path, token, body, contentType string
	}{
		{"POST", classes, adminToken, body, "application/yaml"},
		{"GET", classes + "/my-vm-class", adminToken, "", ""},
		{"PATCH", classes + "/my-vm-class", userToken, `{"spec":{"description":"x"}}`, "application/merge-patch+json"},
		{"PATCH", classes + "/my-vm-class?dryRun=All", adminToken, `{"spec":{"description":"` + secret + `2"}}`, "application/merge-patch+json"},
		{"PUT", vms + "/missing/start", userToken, "", ""},
		{"DELETE", classes + "/my-vm-class", adminToken, "", ""},
	}
	for _, s := range steps {
		g.do(s.method, s.path, s.token, s.body, "Content-Type", s.contentType)
	}
	type line struct {
		Msg, User, Verb, Resource, Subresource, Namespace, Name string
		DryRun                                                  bool
		Code                                                    int
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e line
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if e.Msg == "audit" {
			got = append(got, e)
		}
	}
	want := []line{
		{"audit", "admin", "create", "virtualmachineclasses", "", "my-namespace", "my-vm-class", false, http.StatusCreated},
		{"audit", "user", "patch", "virtualmachineclasses", "", "my-namespace", "my-vm-class", false, http.StatusForbidden},
		{"audit", "admin", "patch", "virtualmachineclasses", "", "my-namespace", "my-vm-class", true, http.StatusOK},
		{"audit", "user", "update", "virtualmachines", "start", "my-namespace", "missing", false, http.StatusNotFound},
		{"audit", "admin", "delete", "virtualmachineclasses", "", "my-namespace", "my-vm-class", false, http.StatusOK},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit lines (-want +got):\n%s", diff)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("a log line carries the request body:\n%s", logs.String())
	}
}
