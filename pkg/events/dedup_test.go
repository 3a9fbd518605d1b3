package events_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Two gateways seed the same status slices at the same moment, through different nodes
// of a 3-node cluster (R3): a replicated stream answers the second of two identical
// messages "duplicate message id is in process" while it stores the first. Both publishes
// succeed, with the one stored message's sequence.
func TestPublishStatusIdenticalOnReplicatedStream(t *testing.T) {
	ctx := testContext(t)
	cluster := eventstest.StartCluster(t, 3)
	js1, _ := cluster.Connect(t)
	js2, _ := cluster.Connect(t)
	if err := events.Setup(ctx, js1, events.WithReplicas(3)); err != nil {
		t.Fatal(err)
	}
	const objects = 40
	seqs := make([][2]uint64, objects)
	var wg sync.WaitGroup
	for r, js := range []jetstream.JetStream{js1, js2} {
		wg.Go(func() {
			for i := range objects {
				ref := events.Ref{Plural: "virtualmachineimages", Namespace: "default", Name: fmt.Sprintf("vmi-%d", i)}
				seq, err := events.PublishStatus(ctx, js, ref, slice("storage", fmt.Sprintf("uid-%d", i), 1, `{"seeded":true}`))
				if err != nil {
					t.Errorf("gateway %d: PublishStatus of %s = %v", r, ref, err)
				}
				seqs[i][r] = seq
			}
		})
	}
	wg.Wait()
	for i, s := range seqs {
		if s[0] != s[1] {
			t.Errorf("vmi-%d: the gateways were answered sequences %d and %d, want one message", i, s[0], s[1])
		}
	}
}
