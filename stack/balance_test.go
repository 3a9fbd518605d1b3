package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The balancer spreads connections over its gateways in turn and, when one stops
// accepting them, sends every connection to the others: none fails.
func TestBalancerRoundRobinAndFailover(t *testing.T) {
	gateway := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) }))
		t.Cleanup(s.Close)
		return s
	}
	a, b := gateway("a"), gateway("b")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		done <- newBalancer([]string{a.Listener.Addr().String(), b.Listener.Addr().String()}).serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	get := func() string {
		t.Helper()
		// A connection per request, as the balancer picks a gateway per connection.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := client.Get("http://" + ln.Addr().String())
		if err != nil {
			t.Fatalf("through the balancer: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
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
