package readmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// servicesPerVM is how many slices each benchmark object receives, like vmop's five services.
const servicesPerVM = 5

// BenchmarkFold measures how many STATUS messages per second the fold applies from a
// backlog, each one re-materialising an existing object with its other slices.
func BenchmarkFold(b *testing.B) {
	js, _ := eventstest.JetStream(b)
	ctx := context.Background()
	objects := (b.N + servicesPerVM - 1) / servicesPerVM
	refs := make([]events.Ref, objects)
	for i := range refs {
		refs[i] = events.Ref{Plural: vms, Namespace: "bench", Name: fmt.Sprintf("vm-%d", i)}
		publishAsync(b, js, events.SpecSubject(refs[i]), benchSpec(refs[i]))
	}
	specSeq := awaitPublished(b, js, events.StreamSpecs)

	s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	stop := benchFold(b, s, js)
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.WaitSpec(waitCtx, specSeq); err != nil {
		b.Fatal(err)
	}
	stop()

	// Every message on its own subject: STATUS keeps only the newest per subject.
	for i := range b.N {
		ref := refs[i%objects]
		slice, _ := json.Marshal(events.Slice{
			Service: fmt.Sprintf("svc%d", i/objects), UID: ref.Name, Generation: 1,
			Status: json.RawMessage(fmt.Sprintf(`{"svc%d":{"n":%d},"conditions":[{"type":"C%d","status":"True"}]}`, i/objects, i, i/objects)),
		})
		publishAsync(b, js, events.StatusSubject(ref, fmt.Sprintf("svc%d", i/objects)), slice)
	}
	statusSeq := awaitPublished(b, js, events.StreamStatus)

	b.ResetTimer()
	start := time.Now()
	stop = benchFold(b, s, js)
	if err := s.WaitStatus(waitCtx, statusSeq); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

func benchSpec(ref events.Ref) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": ref.Name, "namespace": ref.Namespace, "uid": ref.Name,
			"labels": map[string]string{"app": "bench"}},
		"spec": map[string]any{"className": "best-effort-small", "imageName": "vmi-0a0044d7c690bcbea",
			"storageClass": "wcpglobal-storage-profile", "powerState": "PoweredOn"},
	})
	return b
}

func publishAsync(b *testing.B, js jetstream.JetStream, subject string, data []byte) {
	if _, err := js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data}); err != nil {
		b.Fatal(err)
	}
}

// awaitPublished waits for outstanding async publishes and returns the stream's last seq.
func awaitPublished(b *testing.B, js jetstream.JetStream, stream string) uint64 {
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("async publishes not acknowledged")
	}
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		b.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return info.State.LastSeq
}

func benchFold(b *testing.B, s *Store, js jetstream.JetStream) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Fold(ctx, js) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}
