package placement

import (
	"context"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
)

// runReplica runs another placement service on its own connection to the test's NATS, as
// a second replica does, until the test ends.
func (h *harness) runReplica() {
	h.t.Helper()
	js := eventstest.Reconnect(h.t, h.js)
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{JetStream: js, VCenter: seeded.sim.Endpoint(), Logger: testLogger()})
	}()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("replica's Run: %v", err)
		}
	})
}

// Two replicas of placement; VMs kept apart by required anti-affinity are created at once:
// each place (a host of one zone, a zone) takes one, the VMs left over (more VMs than
// zones) are not created and say why, and the cluster rule names every VM of its zone. The namespace's scope keeps the replicas' decisions one at a time, each
// counting those recorded before it.
func TestReplicasKeepAntiAffinity(t *testing.T) {
	for _, tc := range []struct {
		name, topologyKey, zone string
		vms, places             int
	}{
		// Three VMs labelled with a zone of two hosts, created at once: the two first by name
		// take the hosts (a VM waiting for a host keeps one only from those after it).
		{"hosts of a zone", model.TopologyKeyHostname, "zone-a", 3, 2},
		{"zones", model.TopologyKeyZone, "", 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seedClassAndImage()
			h.runService()
			h.runReplica()
			h.waitIdle()

			tier := unique("apart")
			var vms []testVM
			for range tc.vms {
				v := affinityVM("apart", "tier", tier, "vmAntiAffinity", tier, tc.topologyKey)
				delete(v.spec, "groupName")
				if tc.zone != "" {
					v.labels[model.LabelZone] = tc.zone
				}
				vms = append(vms, v)
			}
			for _, v := range vms {
				h.putVM(v, false)
			}

			var places, refs []string
			unplaced := 0
			for _, v := range vms {
				_, st := h.waitSlice(v.ref, "created or unplaceable", func(_ events.Slice, st model.VirtualMachineStatus) bool {
					return created(events.Slice{}, st) || condition(st, model.ConditionPlacementReady).Reason == reasonAffinityUnsatisfiable
				})
				if !isTrue(st, model.ConditionCreated) {
					t.Logf("VM %s: %s", v.ref.Name, condition(st, model.ConditionPlacementReady).Message)
					unplaced++
					if n := len(h.vmsOf(v.uid)); n != 0 {
						t.Errorf("VM %s is unplaceable but has %d VMs in vcsim", v.ref.Name, n)
					}
					continue
				}
				place := st.Zone
				if tc.topologyKey == model.TopologyKeyHostname {
					place = st.NodeName
				}
				places = append(places, place)
				refs = append(refs, st.UniqueID)
			}
			distinct := slices.Compact(slices.Sorted(slices.Values(places)))
			if len(places) != tc.places || len(distinct) != tc.places || unplaced != tc.vms-tc.places {
				t.Fatalf("created at %v, %d unplaceable; want %d VMs at %d distinct places, %d unplaceable",
					places, unplaced, tc.places, tc.places, tc.vms-tc.places)
			}
			if tc.zone != "" {
				rule := h.antiAffinityRule(tc.zone, refs[0])
				if rule == nil || !sameSet(morefValues(rule.Vm), refs) {
					t.Errorf("anti-affinity rule of %s: %+v; want one naming %v", tc.zone, rule, refs)
				}
			}
		})
	}
}
