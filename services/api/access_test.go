package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/services/api"
)

// Every request, read or write, answered or refused, leaves one access line (user, verb,
// path, code, duration) without the body or the bearer token; a health probe answered OK
// only at debug level.
func TestEveryRequestIsLogged(t *testing.T) {
	var logs syncBuffer
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	const secret = "s3cr3t-in-the-body"
	body := strings.Replace(seedClass, "spec:\n", "spec:\n  description: "+secret+"\n", 1)
	g.do("POST", classes, adminToken, body, "Content-Type", "application/yaml")
	g.do("GET", classes+"/my-vm-class", userToken, "")
	g.do("GET", classes+"/missing", adminToken, "")
	g.do("GET", "/apis", "not-a-token", "")
	g.do("GET", "/livez", "", "")
	type line struct {
		Msg, User, Verb, Path string
		Code                  int
		Duration              *int64
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e line
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if e.Msg == "access" && e.Path == "/livez" {
			t.Errorf("a probe answered OK logged at info level: %s", l)
		}
		if e.Msg != "access" || !strings.HasPrefix(e.Path, "/apis") { // not the harness's own waiting
			continue
		}
		if e.Duration == nil || *e.Duration <= 0 {
			t.Errorf("access line without a duration: %s", l)
		}
		e.Duration = nil
		got = append(got, e)
	}
	want := []line{
		{Msg: "access", User: "admin", Verb: "POST", Path: classes, Code: http.StatusCreated},
		{Msg: "access", User: "user", Verb: "GET", Path: classes + "/my-vm-class", Code: http.StatusOK},
		{Msg: "access", User: "admin", Verb: "GET", Path: classes + "/missing", Code: http.StatusNotFound},
		{Msg: "access", User: "", Verb: "GET", Path: "/apis", Code: http.StatusUnauthorized},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access lines (-want +got):\n%s", diff)
	}
	for _, leak := range []string{secret, adminToken, "not-a-token"} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("a log line carries %q:\n%s", leak, logs.String())
		}
	}
}
