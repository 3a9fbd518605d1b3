package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// How the balancer watches its gateways: it asks each one's readiness (readyPath) every
// probeInterval, giving up after probeTimeout (the gateway's own answer may take 2 s: it
// waits for its read model to reach the streams' heads); a connection attempt gives up
// after dialTimeout.
const (
	readyPath     = "/readyz"
	probeInterval = 2 * time.Second
	probeTimeout  = 3 * time.Second
	dialTimeout   = time.Second
)

// runBalance is role balance: one address (VMOP_ADDR) in front of several gateways
// (VMOP_BALANCE_BACKENDS), for compose, whose images cannot be pulled here. It forwards
// TCP, so TLS passes through: clients verify the gateways' certificate (which they
// share) and the balancer holds no key and sees no token. It sends connections to the
// gateways that are ready (their /readyz: able to answer a consistent read now).
func runBalance(ctx context.Context, c config) error {
	if len(c.BalanceBackends) == 0 {
		return errors.New("VMOP_BALANCE_BACKENDS is required for role balance: the gateways' host:port, comma-separated")
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("VMOP_ADDR: %w", err)
	}
	b := newBalancer(c.BalanceBackends)
	go b.probe(ctx)
	slog.Info("balancing", "addr", ln.Addr().String(), "gateways", c.BalanceBackends)
	return b.serve(ctx, ln)
}

// balancer hands each connection to the next ready gateway in turn, skipping those whose
// last probe said not ready or whose last connection failed; a gateway refusing a
// connection passes it to the next.
type balancer struct {
	backends []string
	up       []atomic.Bool
	next     atomic.Uint64
}

func newBalancer(backends []string) *balancer {
	b := &balancer{backends: backends, up: make([]atomic.Bool, len(backends))}
	for i := range b.up {
		b.up[i].Store(true) // until a probe says otherwise
	}
	return b
}

// serve accepts connections on ln until ctx ends.
func (b *balancer) serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		wg.Go(func() { b.forward(ctx, conn) })
	}
}

// order is the gateways to try for one connection: round robin among the ready ones,
// then the others (a probe may be behind, and a gateway not ready beats none).
func (b *balancer) order() []int {
	start := int(b.next.Add(1))
	var up, down []int
	for k := range b.backends {
		i := (start + k) % len(b.backends)
		if b.up[i].Load() {
			up = append(up, i)
		} else {
			down = append(down, i)
		}
	}
	return append(up, down...)
}

// forward connects client to the first gateway that accepts it and copies both ways
// until either side ends; then both are closed, so a dead gateway ends its clients'
// connections (a watch reconnects through the balancer to a live one).
func (b *balancer) forward(ctx context.Context, client net.Conn) {
	defer client.Close()
	for _, i := range b.order() {
		// A gateway that vanishes (its container killed) sends no reset: keepalives
		// notice within 20 s, and its clients' connections end.
		d := net.Dialer{Timeout: dialTimeout, KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 5 * time.Second, Count: 3}}
		gw, err := d.DialContext(ctx, "tcp", b.backends[i])
		if err != nil {
			b.mark(i, err) // only a probe says a gateway is ready again
			continue
		}
		defer gw.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(gw, client); done <- struct{}{} }()
		go func() { _, _ = io.Copy(client, gw); done <- struct{}{} }()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return
	}
	slog.Warn("no gateway accepted a connection", "client", client.RemoteAddr().String(), "gateways", b.backends)
}

// probe asks every gateway whether it is ready, each probeInterval, until ctx ends.
func (b *balancer) probe(ctx context.Context) {
	// The probe sends nothing (no token) and uses only the status code, so it does not
	// verify the gateways' certificate: the balancer holds none of the stack's PKI, and
	// clients verify the gateway end to end through it.
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		DisableKeepAlives: true,
	}}
	var wg sync.WaitGroup
	for i, addr := range b.backends {
		wg.Go(func() {
			t := time.NewTicker(probeInterval)
			defer t.Stop()
			for {
				err := ready(ctx, client, "https://"+addr+readyPath)
				if ctx.Err() != nil {
					return
				}
				b.mark(i, err)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	wg.Wait()
}

// ready asks url whether its gateway is ready: 200, or an error saying why not.
func ready(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		why, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("not ready: %d %s", resp.StatusCode, why)
	}
	return nil
}

// mark records whether gateway i is ready (err nil), logging a change.
func (b *balancer) mark(i int, err error) {
	if was := b.up[i].Swap(err == nil); was != (err == nil) {
		if err != nil {
			slog.Warn("gateway not ready", "gateway", b.backends[i], "err", err)
		} else {
			slog.Info("gateway ready", "gateway", b.backends[i])
		}
	}
}
