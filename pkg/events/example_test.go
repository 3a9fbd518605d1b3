package events_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
)

// The API gateway appends a VirtualMachine's spec; the power service, which
// consumes SPECS, reconciles it.
func ExampleConsume() {
	js, shutdown := exampleJetStream()
	defer shutdown()
	ctx, cancel := context.WithCancel(context.Background())

	// The gateway: create (expect an empty subject), then lose a race.
	vm := events.Ref{Plural: "virtualmachines", Namespace: "default", Name: "my-vm"}
	seq, err := events.AppendSpec(ctx, js, vm, events.OpPut, []byte(`{"spec":{"powerState":"PoweredOn"}}`), 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("appended %s at %d\n", vm, seq)
	_, err = events.AppendSpec(ctx, js, vm, events.OpPut, []byte(`{"spec":{"powerState":"PoweredOff"}}`), 0, nil)
	fmt.Println("second create conflicts:", errors.Is(err, events.ErrConflict))

	// The power service.
	handled := make(chan struct{})
	stopped := make(chan error)
	go func() {
		stopped <- events.Consume(ctx, js, events.ConsumerConfig{
			Stream:         events.StreamSpecs,
			Durable:        events.Durable("power"),
			FilterSubjects: []string{events.SpecFilter("virtualmachines")},
		}, nil, func(ctx context.Context, msg jetstream.Msg) error {
			rec, err := events.ParseSpecMsg(msg)
			if err != nil {
				return err // undecodable: terminated, never retried
			}
			fmt.Printf("reconcile %s at %d (%s)\n", rec.Ref, rec.Seq, rec.Op)
			close(handled)
			return nil // acked
		})
	}()
	<-handled
	cancel()
	fmt.Println("consume stopped:", <-stopped)

	// Output:
	// appended virtualmachines/default/my-vm at 1
	// second create conflicts: true
	// reconcile virtualmachines/default/my-vm at 1 (put)
	// consume stopped: <nil>
}

// exampleJetStream starts an in-process server for the example, which has no
// testing.TB for eventstest.
func exampleJetStream() (jetstream.JetStream, func()) {
	dir, err := os.MkdirTemp("", "events-example")
	if err != nil {
		log.Fatal(err)
	}
	s, err := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, DontListen: true, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		log.Fatal("nats server not ready")
	}
	nc, err := nats.Connect(s.ClientURL(), nats.InProcessServer(s))
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	if err := events.Setup(context.Background(), js); err != nil {
		log.Fatal(err)
	}
	return js, func() {
		nc.Close()
		s.Shutdown()
		s.WaitForShutdown()
		_ = os.RemoveAll(dir)
	}
}
