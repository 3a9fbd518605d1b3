package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// startReplica runs a second storage service on its own connection to js's NATS, as
// another replica does, until the test ends.
func startReplica(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	other := eventstest.Reconnect(t, js)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{JetStream: other, VCenter: vc.Sim.Endpoint()}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica's Run: %v", err)
		}
	})
}

// Two replicas of storage; four VMs ask for one ReadWriteOnce claim at once: its volume
// is attached to exactly one of them, and the others say which VM has it. (Each VM's
// reconcile attaches in CNS, then adds the disk: the volume's scope keeps another VM's
// attach, on either replica, from finding it attached in CNS and on no VM between the
// two, and taking it as a leftover to add again.)
func TestReplicasAttachReadWriteOnceClaimOnce(t *testing.T) {
	js := startService(t)
	startReplica(t, js)
	// The reconfigure adding a disk takes long enough for another VM's reconcile to meet
	// the volume attached in CNS while no VM has its disk yet, unless the scope keeps it out.
	delayTasks(t, "ReconfigVm", 300)
	suffix := uuid.NewString()[:8]
	claim := boundClaim(t, js, "rwo-"+suffix, "8Gi", model.AccessModeReadWriteOnce)
	var vms []*deploytest.VM
	var inVC []*object.VirtualMachine
	for i := range 4 {
		v := upgradedVM("my-namespace", fmt.Sprintf("rwo-%s-%d", suffix, i), vmSpec())
		v.Put(t, js, false)
		inVC = append(inVC, v.Deploy(t, vc, js, inventory.PhotonImage))
		volumesVerified(t, js, v, "True")
		vms = append(vms, v)
	}
	for _, v := range vms {
		v.Spec.Volumes = []model.VirtualMachineVolume{claimVolume("data", claim.ref.Name)}
		v.Put(t, js, false)
	}

	var holders []string
	for i, v := range vms {
		_, st := v.WaitStatus(t, js, model.ServiceStorage, "volumes verified", func(s events.Slice, st model.VirtualMachineStatus) bool {
			c, _ := deploytest.Condition(st, model.ConditionHardwareVolumesVerified)
			return c != "" && c != "Unknown" && s.Generation == v.Generation() && volumeStatus(st, "data") != nil
		})
		disks := len(disksOf(t, inVC[i])[claim.volumeID])
		s := volumeStatus(st, "data")
		switch {
		case disks == 1 && s.Attached && s.Error == "":
			holders = append(holders, v.Ref.Name)
		case disks == 0 && !s.Attached && strings.Contains(s.Error, "is ReadWriteOnce and attached to VM"):
		default:
			t.Errorf("VM %s: %d disks of the claim's volume, status %+v; want attached with its disk, or not attached saying who has it",
				v.Ref.Name, disks, s)
		}
	}
	if len(holders) != 1 {
		t.Errorf("the ReadWriteOnce claim is attached to %v; want exactly one VM", holders)
	}
}

// Two replicas of storage, eight claims created at once and each changed again while CNS
// volumes are being created (a change's reconcile may fall to the other replica, while the
// first still creates the claim's volume): each claim is provisioned in CNS once (one
// volume of its name), as the claim's lease keeps its reconciles one at a time across the
// replicas.
func TestReplicasProvisionEachClaimOnce(t *testing.T) {
	js := startService(t)
	startReplica(t, js)
	delayTasks(t, "CnsCreateVolume", 1000)
	cc := cnsClient(t)
	// observer issued none of the creations: it sees every unfinished one.
	observer := &volumes{vc: vc.Client, cns: cc}
	var claims []*pvcFixture
	for i := range 8 {
		c := newPVCFixture(fmt.Sprintf("once-%d", i), "8Gi", "my-storage-class")
		c.put(t, js)
		claims = append(claims, c)
	}
	waitFor(t, "a CNS volume creation running", func() bool {
		running, err := observer.othersCreates(t.Context())
		return err == nil && len(running) > 0
	})
	for _, c := range claims {
		c.meta()["labels"] = map[string]any{"changed": "yes"}
		c.put(t, js)
	}
	for _, c := range claims {
		c.waitBound(t, js)
		if n := len(cnsVolumes(t, "pvc-"+c.UID)); n != 1 {
			t.Errorf("claim %s: %d CNS volumes named pvc-%s, want 1", c.Ref.Name, n, c.UID)
		}
	}
}
