package events_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

func TestPublishEvent(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	tests := []struct {
		name string
		ref  events.Ref
		want events.CloudEvent
	}{
		{
			name: "namespaced",
			ref:  vmA,
			want: events.CloudEvent{
				SpecVersion: "1.0", ID: "uid-1:7:power", Source: "/vmop/namespaces/default/virtualmachines",
				Type: events.TypeVirtualMachinePoweredOn, Subject: "vm-a", DataContentType: "application/json",
				Data: json.RawMessage(`{"powerState":"PoweredOn"}`),
			},
		},
		{
			name: "cluster scope",
			ref:  events.Ref{Plural: "storageclasses", Name: "gold.fast"},
			want: events.CloudEvent{
				SpecVersion: "1.0", ID: "uid-2:1:api", Source: "/vmop/storageclasses",
				Type: "vmop.storageclass.created", Subject: "gold.fast", DataContentType: "application/json",
				Data: json.RawMessage(`{"powerState":"PoweredOn"}`),
			},
		},
	}
	st, err := js.Stream(ctx, events.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string]string{"powerState": "PoweredOn"}
			before := time.Now()
			for range 2 { // the second publish is a retry and collapses
				if err := events.PublishEvent(ctx, js, tt.ref, tt.want.Type, tt.want.ID, data); err != nil {
					t.Fatalf("PublishEvent = %v", err)
				}
			}
			subject := events.EventSubject(tt.ref, tt.want.Type)
			raw, err := st.GetLastMsgForSubject(ctx, subject)
			if err != nil {
				t.Fatalf("read %s: %v", subject, err)
			}
			if got := raw.Header.Get("Content-Type"); got != "application/cloudevents+json" {
				t.Errorf("Content-Type = %q, want application/cloudevents+json", got)
			}
			var got events.CloudEvent
			if err := json.Unmarshal(raw.Data, &got); err != nil {
				t.Fatalf("decode event: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(events.CloudEvent{}, "Time")); diff != "" {
				t.Errorf("event mismatch (-want +got):\n%s", diff)
			}
			if at, err := time.Parse(time.RFC3339Nano, got.Time); err != nil || at.Before(before.Add(-time.Second)) {
				t.Errorf("event time %q (%v), want RFC 3339 of now", got.Time, err)
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
			if err != nil {
				t.Fatal(err)
			}
			if n := info.State.Subjects[subject]; n != 1 {
				t.Errorf("%s holds %d events, want 1: a retry collapses", subject, n)
			}
		})
	}
}

func TestPublishEventRejects(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)

	for _, typ := range []string{"created", "vmop.created", "vmop.virtualmachine.", "com.example.virtualmachine.created", "vmop.virtualmachine.powered_on"} {
		if err := events.PublishEvent(ctx, js, vmA, typ, "id-1", nil); !errors.Is(err, events.ErrInvalidRef) {
			t.Errorf("PublishEvent(type %q) = %v, want ErrInvalidRef", typ, err)
		}
	}
	if err := events.PublishEvent(ctx, js, vmA, events.TypeVirtualMachineCreated, "", nil); err == nil {
		t.Error("PublishEvent without id succeeded, want an error")
	}
}
