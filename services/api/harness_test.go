package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/services/api"
	"github.com/vmop/vmop/services/api/auth"
)

// Tokens of the callers every test has.
const (
	adminToken   = "admin-token"
	userToken    = "user-token"
	serviceToken = "service-token"
)

var testTokens = auth.TokensFile{Users: []auth.User{
	{Name: "admin", TokenHash: auth.HashToken(adminToken), Groups: []string{auth.GroupMasters}},
	{Name: "user", TokenHash: auth.HashToken(userToken), Namespaces: []string{"default", "my-namespace"}},
	{Name: auth.ServicePrefix + "placement", TokenHash: auth.HashToken(serviceToken), Groups: []string{auth.GroupServices}},
}}

// seedNamespaces are the objects every gateway under test starts with.
var seedNamespaces = []map[string]any{
	{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "default"}},
	{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "my-namespace"}},
	{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "kube-system"}},
}

// gateway is one running api.Run under test.
type gateway struct {
	t       *testing.T
	URL     string
	dir     string
	js      jetstream.JetStream
	certs   api.Certificates
	client  *http.Client
	stop    func()
	stopped chan error
}

// startGateway runs the API on a free port against js, keeping its state in dir, and
// waits until it is ready (the seeded namespaces exist).
func startGateway(t *testing.T, js jetstream.JetStream, dir string) *gateway {
	t.Helper()
	return startGatewayWith(t, js, dir, nil)
}

// startGatewayWith is startGateway with configure changing the configuration first.
func startGatewayWith(t *testing.T, js jetstream.JetStream, dir string, configure func(*api.Config)) *gateway {
	t.Helper()
	certs, err := api.EnsureCertificates(filepath.Join(dir, "pki"), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &gateway{t: t, URL: "https://" + ln.Addr().String(), dir: dir, js: js, certs: certs,
		client: httpsClient(t, certs.CAFile), stopped: make(chan error, 1)}
	cfg := api.Config{
		Listener: ln, DataDir: filepath.Join(dir, "api"), Certs: certs, Tokens: testTokens,
		JetStream: js, Seed: seedNamespaces,
		Namespaces: api.NamespaceSettings{DefaultNetwork: "VM Network"},
	}
	if configure != nil {
		configure(&cfg)
	}
	go func() { g.stopped <- api.Run(ctx, cfg) }()
	g.stop = func() {
		cancel()
		if err := <-g.stopped; err != nil {
			t.Errorf("api.Run: %v", err)
		}
	}
	t.Cleanup(func() {
		if g.stop != nil {
			g.stop()
		}
	})
	// Until the read model caught up it may serve what it held before the start, which
	// is another history when the streams diverged; the seed runs once it caught up.
	g.eventually("read model caught up and namespaces seeded", func() bool {
		if code, _ := g.do("GET", "/readyz", "", nil); code != http.StatusOK {
			return false
		}
		code, _ := g.do("GET", "/api/v1/namespaces/kube-system", adminToken, nil)
		return code == http.StatusOK
	})
	return g
}

// restart stops the gateway and starts a new one on the same state and streams.
func (g *gateway) restart() *gateway {
	g.stop()
	g.stop = nil
	return startGateway(g.t, g.js, g.dir)
}

// rebuild restarts the gateway without its read model, which it then folds anew from the
// streams.
func (g *gateway) rebuild() *gateway {
	g.stop()
	g.stop = nil
	db := filepath.Join(g.dir, "api", "readmodel.db")
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			g.t.Fatal(err)
		}
	}
	return startGateway(g.t, g.js, g.dir)
}

func newStreams(t *testing.T) jetstream.JetStream {
	js, _ := eventstest.JetStream(t)
	return js
}

func httpsClient(t *testing.T, caFile string) *http.Client {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 30 * time.Second}
}

// do sends a request; body may be a string (sent as is), []byte, or any value (JSON).
func (g *gateway) do(method, path, token string, body any, header ...string) (int, []byte) {
	g.t.Helper()
	code, data, _ := g.doHeader(method, path, token, body, header...)
	return code, data
}

func (g *gateway) doHeader(method, path, token string, body any, header ...string) (int, []byte, http.Header) {
	g.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, g.URL+path, r)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.StatusCode, data, resp.Header
}

// eventually waits for cond with a deadline; a test never sleeps to synchronise.
func (g *gateway) eventually(what string, cond func() bool) {
	g.t.Helper()
	eventually(g.t, what, cond)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// specCount is the number of messages in SPECS: admission failures must not change it.
func specCount(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), events.StreamSpecs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return m
}

func field(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
