package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// Streams and buckets are set to three replicas on a cluster, and a part that starts
// later with the default (one) leaves them at three.
func TestSetupNeverLowersReplicas(t *testing.T) {
	c := eventstest.StartCluster(t, 3)
	js, _ := c.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := events.Setup(ctx, js, events.WithReplicas(3)); err != nil {
		t.Fatalf("setup R3: %v", err)
	}
	if _, err := events.IPAM(ctx, js); err != nil {
		t.Fatalf("ipam bucket: %v", err)
	}
	if _, err := events.Leases(ctx, js, "power"); err != nil {
		t.Fatalf("lease bucket: %v", err)
	}
	if err := events.Setup(ctx, js); err != nil {
		t.Fatalf("setup with the default: %v", err)
	}
	if _, err := events.IPAM(ctx, js, events.WithReplicas(1)); err != nil {
		t.Fatalf("ipam bucket again: %v", err)
	}
	for _, name := range []string{events.StreamSpecs, events.StreamStatus, events.StreamEvents, events.StreamDeadLetter, "KV_" + events.BucketIPAM, "KV_" + events.LeaseBucket("power")} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if got := s.CachedInfo().Config.Replicas; got != 3 {
			t.Errorf("%s has %d replicas, want 3", name, got)
		}
	}
}
