package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Killing storage twice while it provisions ten claims, each time with a CNS volume
// creation still running in vCenter, and starting it again ends with exactly one CNS volume
// per claim, the one its spec.volumeName records.
func TestClaimProvisioningSurvivesRestarts(t *testing.T) {
	js, _ := eventstest.JetStream(t)
	if err := vc.PutObjects(t.Context(), js, "storageclasses"); err != nil {
		t.Fatal(err)
	}
	// Creations take long enough for a kill to find one running, and still running once
	// the killed service has returned: under a loaded CI machine that took more than the
	// 1.5 s this once was.
	delayTasks(t, "CnsCreateVolume", 4000)
	cc := cnsClient(t)
	// observer issued none of the creations: it sees every unfinished one.
	observer := &volumes{vc: vc.Client, cns: cc}
	creating := func() bool {
		running, err := observer.othersCreates(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(running) > 0
	}

	start := func() (kill func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, Config{JetStream: js, VCenter: vc.Sim.Endpoint()}) }()
		return func() {
			cancel()
			<-done // a kill may end it with any error
		}
	}
	var claims []*pvcFixture
	for i := range 10 {
		claims = append(claims, newPVCFixture(fmt.Sprintf("crash-%d", i), "1Gi", "my-storage-class"))
	}
	kill := start()
	for _, c := range claims {
		c.put(t, js)
	}
	for round := range 2 {
		deadline := time.Now().Add(20 * time.Second)
		for !creating() {
			if time.Now().After(deadline) {
				t.Fatal("no CNS volume creation running before the deadline")
			}
			time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
		}
		kill()
		if !creating() {
			t.Fatal("no creation left running at the kill: the test proves nothing")
		}
		kill = start()
		// A VM's change reconciles every claim it names at once: also the one whose
		// creation still runs, long before its message would be delivered again.
		var named []model.VirtualMachineVolume
		for _, c := range claims {
			named = append(named, claimVolume(c.Ref.Name, c.Ref.Name))
		}
		nudge := deploytest.NewVM("my-namespace", fmt.Sprintf("nudge-%d", round), vmSpec(named...))
		nudge.Put(t, js, false)
	}
	defer kill()
	for _, c := range claims {
		c.waitBound(t, js)
		vols := cnsVolumes(t, "pvc-"+c.UID)
		if len(vols) != 1 {
			t.Errorf("%s: %d CNS volumes, want exactly 1", c.Ref.Name, len(vols))
			continue
		}
		if _, stored := c.stored(t, js); stored.Spec.VolumeName != vols[0].VolumeId.Id {
			t.Errorf("%s: volumeName %q, want the volume's %q", c.Ref.Name, stored.Spec.VolumeName, vols[0].VolumeId.Id)
		}
	}
}

// delayTasks makes vcsim's tasks of method take ms milliseconds until the test ends.
func delayTasks(t *testing.T, method string, ms int) {
	simulator.TaskDelay = simulator.DelayConfig{MethodDelay: map[string]int{method: ms, "LockHandoff": 0}}
	t.Cleanup(func() { simulator.TaskDelay = simulator.DelayConfig{} })
}
