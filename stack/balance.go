package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// How the balancer watches its gateways: a connection attempt every probeInterval, given
// up after dialTimeout.
const (
	probeInterval = 2 * time.Second
	dialTimeout   = time.Second
)

// runBalance is role balance: one address (VMOP_ADDR) in front of several gateways
// (VMOP_BALANCE_BACKENDS), for compose, whose images cannot be pulled here. It forwards
// TCP, so TLS passes through: clients verify the gateways' certificate (which they
// share) and the balancer holds no key and sees no token.
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

// balancer hands each connection to the next gateway in turn, skipping those whose last
// probe or connection failed; a gateway refusing a connection passes it to the next.
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

// order is the gateways to try for one connection: round robin among those up, then
// those down (a probe may be behind).
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
		b.mark(i, err)
		if err != nil {
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

// probe tries every gateway each probeInterval until ctx ends.
func (b *balancer) probe(ctx context.Context) {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		for i, addr := range b.backends {
			d := net.Dialer{Timeout: dialTimeout}
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
			}
			if ctx.Err() != nil {
				return
			}
			b.mark(i, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// mark records whether gateway i accepted a connection, logging a change.
func (b *balancer) mark(i int, err error) {
	if was := b.up[i].Swap(err == nil); was != (err == nil) {
		if err != nil {
			slog.Warn("gateway down", "gateway", b.backends[i], "err", err)
		} else {
			slog.Info("gateway up", "gateway", b.backends[i])
		}
	}
}
