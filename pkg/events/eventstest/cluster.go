package eventstest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is an in-process NATS cluster with JetStream, its nodes routed to each other on
// loopback. Stop a node to see the others carry on.
type Cluster struct {
	Nodes []*server.Server
}

// StartCluster starts n routed nodes (3 for replicated streams) and waits until
// JetStream has a meta leader. The nodes are shut down when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	routes := make([]string, n)
	ports := make([]int, n)
	for i := range n {
		ports[i] = FreePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i])
	}
	c := &Cluster{}
	for i := range n {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("node-%d", i),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			Cluster:    server.ClusterOpts{Name: "vmop", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
			NoLog:      true,
			NoSigs:     true,
		})
		if err != nil {
			t.Fatalf("new nats node %d: %v", i, err)
		}
		go s.Start()
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
		c.Nodes = append(c.Nodes, s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range c.Nodes {
		if !s.ReadyForConnections(time.Until(deadline)) {
			t.Fatalf("nats node %s not ready", s.Name())
		}
	}
	for !c.hasMetaLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the NATS cluster had no JetStream meta leader seeing every node within 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling a condition: the election has no event to wait on
	}
	return c
}

// hasMetaLeader reports whether a meta leader sees every node as a JetStream peer with
// current stats: before that it places a replicated stream on too few ("no suitable peers").
func (c *Cluster) hasMetaLeader() bool {
	for _, s := range c.Nodes {
		if s.Running() && s.JetStreamIsLeader() {
			return len(s.JetStreamClusterPeers()) == len(c.Nodes)
		}
	}
	return false
}

// URL lists every node's client URL, as nats.Connect takes them: a client fails over to
// another node when its own stops.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		urls[i] = s.ClientURL()
	}
	return strings.Join(urls, ",")
}

// Connect opens a connection to the cluster (reconnecting forever to whichever node is
// up), closed when the test ends.
func (c *Cluster) Connect(t testing.TB) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(c.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("connect to the nats cluster: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js, nc
}
