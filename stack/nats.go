package main

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startNATS runs an embedded nats-server with JetStream stored under dir, listening on
// addr so outside systems can subscribe to vmop's subjects. Every write is synced to disk
// before it is acknowledged (sync_always): a write answered 201 survives a power loss.
func startNATS(dir, addr string) (*server.Server, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("VMOP_NATS_ADDR %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("VMOP_NATS_ADDR port %q: %w", portStr, err)
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "vmop",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(dir, "nats"),
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("configure nats-server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("nats-server did not become ready")
	}
	return ns, nil
}

// connect dials NATS: the given URL, or the embedded server in-process.
func connect(url string, ns *server.Server, name string) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1)}
	if ns != nil {
		url = ns.ClientURL()
		opts = append(opts, nats.InProcessServer(ns))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to nats %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}
