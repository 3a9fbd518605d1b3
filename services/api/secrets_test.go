package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secrets = "/api/v1/namespaces/my-namespace/secrets"

// TestSecretData: an ordinary user writes a Secret in one of its namespaces with data and
// stringData and reads the values back (also in a list and after a patch); the read model's
// file never holds them; a caller of another namespace is refused.
func TestSecretData(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const value, plain = "s3cr3t-in-data-7f1c", "s3cr3t-in-stringdata-9e2d"
	body := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + plain + `"}}`, "a": "b"}},
		"data":       map[string]any{"user-data": base64.StdEncoding.EncodeToString([]byte(value))},
		"stringData": map[string]any{"password": plain},
	}
	code, resp := g.do("POST", secrets, userToken, body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	want := map[string]any{
		"user-data": base64.StdEncoding.EncodeToString([]byte(value)),
		"password":  base64.StdEncoding.EncodeToString([]byte(plain)),
	}
	check := func(what string, obj map[string]any) {
		t.Helper()
		data, _ := obj["data"].(map[string]any)
		for k, v := range want {
			if data[k] != v {
				t.Errorf("%s: data[%s] = %v, want %v", what, k, data[k], v)
			}
		}
		if ann, _ := field(obj, "metadata", "annotations").(map[string]any); ann["a"] != "b" ||
			!strings.Contains(fmt.Sprint(ann["kubectl.kubernetes.io/last-applied-configuration"]), plain) {
			t.Errorf("%s: annotations %v, want a and the last-applied one", what, ann)
		}
		if obj["stringData"] != nil || obj["type"] != "Opaque" {
			t.Errorf("%s: stringData %v, type %v: want none and Opaque", what, obj["stringData"], obj["type"])
		}
	}
	check("create", decode(t, resp))
	code, resp = g.do("GET", secrets+"/creds", userToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get: %d %s", code, resp)
	}
	check("get", decode(t, resp))
	code, resp = g.do("GET", secrets, userToken, nil)
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, resp)
	}
	items, _ := decode(t, resp)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("list: %d items", len(items))
	}
	check("list", items[0].(map[string]any))
	code, resp = g.do("PATCH", secrets+"/creds", userToken, `{"metadata":{"labels":{"a":"b"}}}`,
		"Content-Type", "application/merge-patch+json")
	if code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, resp)
	}
	check("patch", decode(t, resp))

	code, resp = g.do("GET", secrets+"?watch=1&timeoutSeconds=1", userToken, nil)
	var ev struct {
		Type   string         `json:"type"`
		Object map[string]any `json:"object"`
	}
	if err := json.NewDecoder(bytes.NewReader(resp)).Decode(&ev); code != http.StatusOK || err != nil || ev.Type != "ADDED" {
		t.Fatalf("watch: %d %v %s", code, err, resp)
	}
	check("watch", ev.Object)

	if code, resp := g.do("GET", "/api/v1/namespaces/kube-system/secrets", userToken, nil); code != http.StatusForbidden {
		t.Errorf("user lists kube-system secrets: %d %s", code, resp)
	}

	// The read model's files (database, WAL) hold neither value.
	files, _ := filepath.Glob(filepath.Join(g.dir, "api", "*"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, v := range []string{value, plain, want["user-data"].(string), want["password"].(string)} {
			if bytes.Contains(raw, []byte(v)) {
				t.Errorf("%s holds a secret value", f)
			}
		}
	}
}

// TestSecretBadInput: more than 1 MiB of data is 413, a value that is not base64 is 422,
// and neither is stored.
func TestSecretBadInput(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	before := specCount(t, js)
	big := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "big"},
		"stringData": map[string]any{"blob": strings.Repeat("x", 1<<20+1)},
	}
	if code, resp := g.do("POST", secrets, userToken, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MiB + 1 of data: %d %s, want 413", code, resp)
	}
	bad := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "bad"},
		"data": map[string]any{"key": "not base64!"},
	}
	code, resp := g.do("POST", secrets, userToken, bad)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(resp), "data[key]") {
		t.Errorf("data that is not base64: %d %s, want 422 naming data[key]", code, resp)
	}
	if after := specCount(t, js); after != before {
		t.Errorf("SPECS grew from %d to %d records", before, after)
	}
}

// TestConfigMap: an ordinary user writes and reads a ConfigMap in its namespace; a key
// given in both data and binaryData is refused.
func TestConfigMap(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const path = "/api/v1/namespaces/my-namespace/configmaps"
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"},
		"data": map[string]any{"a": "1"}}
	if code, resp := g.do("POST", path, userToken, cm); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	code, resp := g.do("GET", path+"/settings", userToken, nil)
	if code != http.StatusOK || field(decode(t, resp), "data", "a") != "1" {
		t.Errorf("get: %d %s", code, resp)
	}
	dup := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "dup"},
		"data": map[string]any{"a": "1"}, "binaryData": map[string]any{"a": "MQ=="}}
	if code, resp := g.do("POST", path, userToken, dup); code != http.StatusUnprocessableEntity {
		t.Errorf("duplicate key: %d %s", code, resp)
	}
}
