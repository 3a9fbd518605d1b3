package crypto

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// vc is one seeded vcsim for the package; each test deploys its own VMs and its own NATS.
var vc *deploytest.Env

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	env, err := deploytest.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	vc = env
	code := m.Run()
	env.Close()
	os.Exit(code)
}

// startService runs the crypto service against a fresh NATS with the inventory's
// storage classes in SPECS, until the test ends.
func startService(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, _ := eventstest.JetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	if err := vc.PutObjects(ctx, js, "storageclasses"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{JetStream: js, VCenterURL: vc.Sim.URL}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return js
}

// vmObject is a VirtualMachine as admission stores it.
type vmObject struct {
	ref  events.Ref
	uid  string
	spec model.VirtualMachineSpec
	gen  int64
	seq  uint64
}

func newVM(namespace, name string, spec model.VirtualMachineSpec) *vmObject {
	if spec.InstanceUUID == "" {
		spec.InstanceUUID = uuid.NewString()
	}
	return &vmObject{ref: events.Ref{Plural: "virtualmachines", Namespace: namespace, Name: name}, uid: uuid.NewString(), spec: spec}
}

// put appends the next generation of the object's spec (deleting marks it deleted).
func (v *vmObject) put(t *testing.T, js jetstream.JetStream, deleting bool) {
	t.Helper()
	v.gen++
	meta := map[string]any{"name": v.ref.Name, "namespace": v.ref.Namespace, "uid": v.uid, "generation": v.gen}
	if deleting {
		meta["deletionTimestamp"] = "2026-11-22T00:00:00Z"
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine", "metadata": meta, "spec": v.spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.seq, err = events.AppendSpec(t.Context(), js, v.ref, events.OpPut, body, v.seq, nil); err != nil {
		t.Fatal(err)
	}
}

// deploy creates the VM in vcsim from a library item as placement would, and reports it
// created in a placement slice.
func (v *vmObject) deploy(t *testing.T, js jetstream.JetStream, item string) *object.VirtualMachine {
	t.Helper()
	vm, err := vc.Deploy(t.Context(), item, v.ref.Name, v.spec.InstanceUUID, v.ref, v.uid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deploytest.Destroy(ctx, vm); err != nil {
			t.Errorf("destroy %s: %v", v.ref.Name, err)
		}
	})
	if err := deploytest.MarkCreated(t.Context(), js, v.ref, v.uid, v.gen); err != nil {
		t.Fatal(err)
	}
	return vm
}

// waitStatus waits, with a deadline, for the service's slice about v that satisfies ok,
// and returns it with its status decoded.
func (v *vmObject) waitStatus(t *testing.T, js jetstream.JetStream, what string, ok func(events.Slice, model.VirtualMachineStatus) bool) (events.Slice, model.VirtualMachineStatus) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		rec, err := events.LastStatus(t.Context(), js, v.ref, model.ServiceCrypto)
		var st model.VirtualMachineStatus
		if err == nil && rec.Slice.UID == v.uid {
			if len(rec.Slice.Status) > 0 {
				if err := json.Unmarshal(rec.Slice.Status, &st); err != nil {
					t.Fatalf("decode status: %v", err)
				}
			}
			if ok(rec.Slice, st) {
				return rec.Slice, st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slice with %s before the deadline; last: %s (err %v)", what, rec.Slice.Status, err)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// condition returns the condition of type typ of st, or a zero one.
func condition(st model.VirtualMachineStatus, typ string) (status, reason string) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}
