package deploytest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

// Serve runs a service (run, until its context ends) against a fresh NATS holding the
// inventory's objects of the given kinds, until the test ends.
func (e *Env) Serve(t testing.TB, run func(context.Context, jetstream.JetStream) error, plurals ...string) jetstream.JetStream {
	t.Helper()
	runAfterServices(t)
	js, _ := eventstest.JetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.PutObjects(ctx, js, plurals...); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, js) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return js
}

// VM is a VirtualMachine object as admission stores it, for a service's test to drive.
type VM struct {
	Ref  events.Ref
	UID  string
	Spec model.VirtualMachineSpec
	// Annotations are the object's metadata.annotations, none when nil.
	Annotations map[string]string
	gen         int64
	seq         uint64
}

// NewVM is a VirtualMachine with a fresh UID and, unless spec has one, instance UUID.
func NewVM(namespace, name string, spec model.VirtualMachineSpec) *VM {
	if spec.InstanceUUID == "" {
		spec.InstanceUUID = uuid.NewString()
	}
	return &VM{Ref: events.Ref{Plural: "virtualmachines", Namespace: namespace, Name: name}, UID: uuid.NewString(), Spec: spec}
}

// Put appends the next generation of the object's spec (deleting marks it deleted).
func (v *VM) Put(t testing.TB, js jetstream.JetStream, deleting bool) {
	t.Helper()
	v.gen++
	meta := map[string]any{"name": v.Ref.Name, "namespace": v.Ref.Namespace, "uid": v.UID, "generation": v.gen}
	if deleting {
		meta["deletionTimestamp"] = "2026-11-22T00:00:00Z"
	}
	if v.Annotations != nil {
		meta["annotations"] = v.Annotations
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine", "metadata": meta, "spec": v.Spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.seq, err = events.AppendSpec(t.Context(), js, v.Ref, events.OpPut, body, v.seq, nil); err != nil {
		t.Fatal(err)
	}
}

// Generation is the generation Put last wrote.
func (v *VM) Generation() int64 { return v.gen }

// Sync adopts the object's newest record as the base of the next Put: what a service
// appended meanwhile (the storage service's schema upgrade) is kept, not overwritten.
func (v *VM) Sync(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	rec, err := events.LastSpec(t.Context(), js, v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Metadata struct {
			Generation  int64             `json:"generation"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec model.VirtualMachineSpec `json:"spec"`
	}
	if err := json.Unmarshal(rec.Body, &obj); err != nil {
		t.Fatal(err)
	}
	v.seq, v.gen, v.Spec, v.Annotations = rec.Seq, obj.Metadata.Generation, obj.Spec, obj.Metadata.Annotations
}

// Deploy creates the VM in e's vcsim from a library item as placement would (recording
// the class it was given, when SPECS has it), reports it created in a placement slice, and
// destroys it when the test ends.
func (v *VM) Deploy(t testing.TB, e *Env, js jetstream.JetStream, item string) *object.VirtualMachine {
	t.Helper()
	var extra []types.BaseOptionValue
	var class model.VirtualMachineClass
	found, err := reconcile.LastSpecOf(t.Context(), js, events.Ref{Plural: "virtualmachineclasses", Namespace: v.Ref.Namespace, Name: v.Spec.ClassName}, &class)
	if err != nil {
		t.Fatal(err)
	}
	if found {
		extra = append(extra, vmopvc.AppliedClassOption(model.AppliedClassOf(class.Name, &class)))
	}
	vm, err := e.Deploy(t.Context(), item, v.Ref.Name, v.Spec.InstanceUUID, v.Ref, v.UID, extra...)
	if err != nil {
		t.Fatal(err)
	}
	AfterServices(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := Destroy(ctx, vm); err != nil {
			t.Errorf("destroy %s: %v", v.Ref.Name, err)
		}
	})
	if err := MarkCreated(t.Context(), js, v.Ref, v.UID, v.gen); err != nil {
		t.Fatal(err)
	}
	return vm
}

// WaitStatus waits, with a deadline, for the service's slice about v that satisfies ok,
// and returns it with its status decoded. The deadline allows for a service started again
// after a stop cut work short: it waits out the leases that work left (events.LeaseTTL).
func (v *VM) WaitStatus(t testing.TB, js jetstream.JetStream, service, what string, ok func(events.Slice, model.VirtualMachineStatus) bool) (events.Slice, model.VirtualMachineStatus) {
	t.Helper()
	deadline := time.Now().Add(events.LeaseTTL + 15*time.Second)
	for {
		rec, err := events.LastStatus(t.Context(), js, v.Ref, service)
		var st model.VirtualMachineStatus
		if err == nil && rec.Slice.UID == v.UID {
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
			t.Fatalf("no %s slice with %s before the deadline; last: %s (err %v)", service, what, rec.Slice.Status, err)
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
}

// Condition returns the status and reason of st's condition of type typ, "" for none.
func Condition(st model.VirtualMachineStatus, typ string) (status, reason string) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}
