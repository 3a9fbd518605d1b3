package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Compose's NATS: nats-init writes the keys the nodes share and hands a part its own
// credentials only; three secured nodes sharing those keys (each its own store) route to
// each other over TLS with the route secret, set the streams up R3, serve a part's
// identity over TLS, and carry on when a node stops.
func TestSecuredNATSCluster(t *testing.T) {
	ctx := t.Context()
	data, export := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(export, "placement"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runNATSInit(ctx, config{Data: data, NATSExport: export}); err != nil {
		t.Fatalf("nats-init: %v", err)
	}
	exported, err := os.ReadFile(filepath.Join(export, "placement", "nats.creds"))
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := os.ReadFile(filepath.Join(data, "nats", "placement.creds")); !bytes.Equal(exported, own) {
		t.Error("nats-init exported other credentials than placement's own")
	}
	if _, err := os.Stat(filepath.Join(export, "power")); err == nil {
		t.Error("nats-init created a directory nobody asked for")
	}

	const nodes = 3
	clients, routes := make([]string, nodes), make([]string, nodes)
	for i := range nodes {
		clients[i] = eventstest.FreeAddr(t)
		routes[i] = "nats-route://" + eventstest.FreeAddr(t)
	}
	servers := make([]*embeddedNATS, nodes)
	errs := make([]error, nodes)
	// A node waits for its peers to set the R3 streams up, for as long as its context
	// lasts: one that fails to start (a free port taken meanwhile) ends the others' wait,
	// and so does a deadline.
	starting, failed := context.WithTimeout(ctx, 2*time.Minute)
	defer failed()
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			servers[i], errs[i] = startNATS(starting, config{
				Data: data, NATSAddr: clients[i], NATSName: fmt.Sprintf("node-%d", i),
				NATSClusterAddr: strings.TrimPrefix(routes[i], "nats-route://"), NATSRoutes: strings.Join(routes, ","),
				StreamReplicas: 3,
			})
			if errs[i] != nil {
				failed()
			}
		})
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			t.Cleanup(s.Shutdown)
		}
	}
	for i, s := range servers {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		if _, err := os.Stat(filepath.Join(data, "nats", fmt.Sprintf("node-%d", i), "jetstream")); err != nil {
			t.Errorf("node %d keeps no store of its own: %v", i, err)
		}
		// Replication is the durability: a write a majority stored survives any one node.
		if s.JetStreamConfig().SyncAlways {
			t.Errorf("node %d of an R3 cluster syncs every write to disk", i)
		}
	}

	url := "tls://" + strings.Join(clients, ",tls://")
	_, admin := natsAs(t, url, data, adminIdentity)
	for _, name := range []string{events.StreamSpecs, events.StreamStatus, events.StreamEvents} {
		s, err := admin.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}

	servers[0].Shutdown()
	_, placement := natsAs(t, url, data, "placement")
	vm := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "vm-a"}
	slice := events.Slice{Service: "placement", UID: "uid-a", Generation: 1, Status: []byte(`{}`)}
	// A publish meeting the election of the stopped node's streams' new leaders is tried
	// again, as the services do.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := events.PublishStatus(ctx, placement, vm, slice)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement publishing its slice with one node of three stopped: %v", err)
		}
	}
}

// A cluster node's settings that would misplace its store or its peers are refused.
func TestNATSClusterSettingsRefused(t *testing.T) {
	for _, c := range []config{
		{NATSName: "../elsewhere", NATSClusterAddr: "127.0.0.1:6222", NATSRoutes: "nats-route://127.0.0.1:6222"},
		{NATSName: "", NATSClusterAddr: "127.0.0.1:6222", NATSRoutes: "nats-route://127.0.0.1:6222"},
		{NATSName: "node-a", NATSClusterAddr: "127.0.0.1:6222", NATSRoutes: ""},
		{NATSName: "node-a", NATSClusterAddr: "127.0.0.1:6222", NATSRoutes: "nats://127.0.0.1:6222"},
		{NATSName: "node-a", NATSClusterAddr: "127.0.0.1:6222", NATSRoutes: "nats-route://user:pw@127.0.0.1:6222"},
	} {
		if _, _, err := natsCluster(c, t.TempDir(), nil); err == nil {
			t.Errorf("natsCluster(name %q, routes %q) accepted", c.NATSName, c.NATSRoutes)
		}
	}
}
