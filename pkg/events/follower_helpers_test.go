package events_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// replicated is a 3-node cluster with vmop's streams at R3: a connection to it (admin, nc)
// that reads what the stream's members hold, and the cluster to reach one node of.
type replicated struct {
	cluster *eventstest.Cluster
	admin   jetstream.JetStream
	nc      *nats.Conn
}

func startReplicated(t *testing.T) replicated {
	t.Helper()
	r := replicated{cluster: eventstest.StartCluster(t, 3)}
	r.admin, r.nc = r.cluster.Connect(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := events.Setup(ctx, r.admin, events.WithReplicas(3)); err != nil {
		t.Fatal(err)
	}
	return r
}

// statusAt is the STATUS message at seq as a direct get answers it (a 404 when there is
// none), to be answered again later.
func (r replicated) statusAt(t *testing.T, seq uint64) *nats.Msg {
	t.Helper()
	m, err := r.nc.Request("$JS.API.DIRECT.GET."+events.StreamStatus, fmt.Appendf(nil, `{"seq":%d}`, seq), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// missing is what a direct get answers for a message a member does not hold.
func (r replicated) missing(t *testing.T) *nats.Msg { return r.statusAt(t, 1<<40) }

// lagging is a connection to node 0 whose direct gets of STATUS are answered as a follower
// that lags behind answers them: by sequence with bySeq, the newest of a slice's subject
// with last[subject]; nil answers, and every other request, go to the cluster.
func (r replicated) lagging(t *testing.T, bySeq *nats.Msg, last map[string]*nats.Msg) jetstream.JetStream {
	t.Helper()
	directGet := "$JS.API.DIRECT.GET." + events.StreamStatus
	return eventstest.Lossy(t, r.cluster.Nodes[0], 5*time.Second, func(subject string, m *nats.Msg, _ *string) bool {
		answer := bySeq
		if subject != directGet {
			answer = last[strings.TrimPrefix(subject, directGet+".")]
		}
		if answer == nil || !strings.HasPrefix(subject, directGet) {
			return false
		}
		_ = r.nc.PublishMsg(&nats.Msg{Subject: m.Reply, Header: answer.Header, Data: answer.Data})
		return true
	})
}
