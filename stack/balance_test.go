package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// testGateway stands in for a gateway: it answers every request with its name, and /readyz
// with 200 while ready holds, else 503.
type testGateway struct {
	*httptest.Server
	ready atomic.Bool
}

func startTestGateway(t *testing.T, name string) *testGateway {
	g := &testGateway{}
	g.ready.Store(true)
	g.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == readyPath && !g.ready.Load() {
			http.Error(w, "read model behind the streams", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, name)
	}))
	t.Cleanup(g.Close)
	return g
}

// runTestBalancer serves a balancer over gateways on a free port until the test ends,
// probing their readiness when probe is set.
func runTestBalancer(t *testing.T, probe bool, gateways ...*testGateway) (*balancer, func() string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, g := range gateways {
		addrs = append(addrs, g.Listener.Addr().String())
	}
	b := newBalancer(addrs)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- b.serve(ctx, ln) }()
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		if probe {
			b.probe(ctx)
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		<-probed
	})
	// A connection per request, as the balancer picks a gateway per connection; the
	// gateways share the test server's certificate.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   gateways[0].Client().Transport.(*http.Transport).TLSClientConfig,
	}}
	get := func() string {
		t.Helper()
		resp, err := client.Get("https://" + ln.Addr().String())
		if err != nil {
			t.Fatalf("through the balancer: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	return b, get
}

// The balancer spreads connections over its gateways in turn and, when one stops
// accepting them, sends every connection to the others: none fails.
func TestBalancerRoundRobinAndFailover(t *testing.T) {
	a, b := startTestGateway(t, "a"), startTestGateway(t, "b")
	_, get := runTestBalancer(t, false, a, b)
	seen := map[string]int{}
	for range 6 {
		seen[get()]++
	}
	if seen["a"] != 3 || seen["b"] != 3 {
		t.Errorf("6 connections went %v, want 3 to each gateway", seen)
	}

	b.Close()
	for i := range 6 {
		if got := get(); got != "a" {
			t.Errorf("connection %d after b stopped answered by %q, want a", i, got)
		}
	}
}

// A gateway that accepts connections but is not ready (its /readyz: its read model behind
// the streams) gets none until it is ready again.
func TestBalancerSkipsGatewaysNotReady(t *testing.T) {
	a, b := startTestGateway(t, "a"), startTestGateway(t, "b")
	bal, get := runTestBalancer(t, true, a, b)
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * probeInterval)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling the probe's verdict
		}
	}

	b.ready.Store(false)
	waitUntil("the probe finds b not ready", func() bool { return !bal.up[1].Load() })
	for i := range 6 {
		if got := get(); got != "a" {
			t.Errorf("connection %d while b is not ready answered by %q, want a", i, got)
		}
	}

	b.ready.Store(true)
	waitUntil("the probe finds b ready", func() bool { return bal.up[1].Load() })
	seen := map[string]int{}
	for range 6 {
		seen[get()]++
	}
	if seen["a"] != 3 || seen["b"] != 3 {
		t.Errorf("6 connections once b is ready again went %v, want 3 to each gateway", seen)
	}
}

// `vmop healthcheck tcp://…` succeeds while something accepts connections there.
func TestHealthcheckTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	noEnv := func(string) string { return "" }
	if code := cli(t.Context(), []string{"healthcheck", "tcp://" + addr}, noEnv, io.Discard, io.Discard); code != 0 {
		t.Errorf("healthcheck of a listening address exits %d", code)
	}
	ln.Close()
	if code := cli(t.Context(), []string{"healthcheck", "tcp://" + addr}, noEnv, io.Discard, io.Discard); code == 0 {
		t.Error("healthcheck of a closed address exits 0")
	}
}
