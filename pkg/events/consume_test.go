package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

var testDurable = events.Durable("test")

func specConsumer() events.ConsumerConfig {
	return events.ConsumerConfig{
		Stream:         events.StreamSpecs,
		Durable:        testDurable,
		FilterSubjects: []string{events.SpecFilter("virtualmachines")},
	}
}

// running is a Consume call in the background.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func runConsume(t *testing.T, js jetstream.JetStream, cfg events.ConsumerConfig, h events.Handler) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = events.Consume(ctx, js, cfg, nil, h)
	}()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Consume and returns what it returned.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	receive(t, "Consume to return", r.done)
	return r.err
}

func consumerInfo(t *testing.T, js jetstream.JetStream, stream string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := js.Consumer(testContext(t), stream, testDurable)
	if err != nil {
		t.Fatalf("consumer %s: %v", stream, err)
	}
	info, err := c.Info(testContext(t))
	if err != nil {
		t.Fatalf("consumer info: %v", err)
	}
	return info
}

func appendSpec(t *testing.T, js jetstream.JetStream, ref events.Ref, expect uint64, body string) uint64 {
	t.Helper()
	seq, err := events.AppendSpec(testContext(t), js, ref, events.OpPut, []byte(body), expect, nil)
	if err != nil {
		t.Fatalf("AppendSpec(%v) = %v", ref, err)
	}
	return seq
}

func vm(name string) events.Ref {
	return events.Ref{Plural: "virtualmachines", Namespace: "default", Name: name}
}

func TestConsumeHandsEveryMessageAndAcks(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	want := map[events.Ref]uint64{}
	for _, name := range []string{"vm-1", "vm-2", "web.example.com"} {
		want[vm(name)] = appendSpec(t, js, vm(name), 0, `{}`)
	}
	// Not matched by the filter.
	appendSpec(t, js, events.Ref{Plural: "storageclasses", Name: "gold"}, 0, `{}`)

	got := make(chan events.SpecRecord, 4)
	r := runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		rec, err := events.ParseSpecMsg(msg)
		if err != nil {
			return err
		}
		got <- rec
		return nil
	})
	seen := map[events.Ref]uint64{}
	for range want {
		rec := receive(t, "a handled message", got)
		seen[rec.Ref] = rec.Seq
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("handled records mismatch (-want +got):\n%s", diff)
	}
	eventually(t, "every message is acked", func() bool {
		info := consumerInfo(t, js, events.StreamSpecs)
		return info.NumAckPending == 0 && info.AckFloor.Consumer == uint64(len(want))
	})
	if err := r.stop(t); err != nil {
		t.Errorf("Consume after cancel = %v, want nil", err)
	}
}

// TestConsumeSerialisesPerObject shows that one object's messages are handled
// one at a time in order while another object's run beside them.
func TestConsumeSerialisesPerObject(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	a1 := appendSpec(t, js, vm("vm-a"), 0, `{"v":1}`)
	a2 := appendSpec(t, js, vm("vm-a"), a1, `{"v":2}`)
	a3 := appendSpec(t, js, vm("vm-a"), a2, `{"v":3}`)
	appendSpec(t, js, vm("vm-b"), 0, `{"v":1}`)

	active := map[string]*atomic.Int32{"vm-a": {}, "vm-b": {}}
	bHandled := make(chan struct{})
	handled := make(chan uint64, 4)
	var mu sync.Mutex
	var orderA []uint64
	runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		rec, err := events.ParseSpecMsg(msg)
		if err != nil {
			return err
		}
		name := rec.Ref.Name
		if n := active[name].Add(1); n != 1 {
			t.Errorf("%s: %d handlers at once", name, n)
		}
		defer active[name].Add(-1)
		defer func() { handled <- rec.Seq }()
		switch {
		case name == "vm-b":
			close(bHandled)
		case rec.Seq == a1: // vm-a's first message waits for vm-b: objects run in parallel
			select {
			case <-bHandled:
			case <-time.After(waitTimeout):
				t.Errorf("vm-b was not handled while vm-a's handler ran")
			}
		}
		if name == "vm-a" {
			mu.Lock()
			orderA = append(orderA, rec.Seq)
			mu.Unlock()
		}
		return nil
	})
	for range 4 {
		receive(t, "a handled message", handled)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []uint64{a1, a2, a3}; !slices.Equal(orderA, want) {
		t.Errorf("vm-a handled in order %v, want %v", orderA, want)
	}
}

// TestConsumeSharedQueueSerialisesAcrossStreams shows that a spec and a
// status message about the same object never run at once when the two
// Consume calls share a queue.
func TestConsumeSharedQueueSerialisesAcrossStreams(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	queue := events.NewKeyedQueue(4)
	appendSpec(t, js, vmA, 0, `{}`)

	var specRunning atomic.Bool
	specStarted, releaseSpec := make(chan struct{}), make(chan struct{})
	statusRan := make(chan struct{})
	specs := specConsumer()
	specs.Queue = queue
	runConsume(t, js, specs, func(ctx context.Context, msg jetstream.Msg) error {
		specRunning.Store(true)
		defer specRunning.Store(false)
		close(specStarted)
		<-releaseSpec
		return nil
	})
	runConsume(t, js, events.ConsumerConfig{
		Stream: events.StreamStatus, Durable: testDurable, FilterSubjects: []string{events.StatusFilter("")}, Queue: queue,
	}, func(ctx context.Context, msg jetstream.Msg) error {
		if specRunning.Load() {
			t.Error("the status handler runs while the spec handler of the same object does")
		}
		close(statusRan)
		return nil
	})

	receive(t, "the spec handler to start", specStarted)
	if _, err := events.PublishStatus(testContext(t), js, vmA, slice("power", "uid-a", 1, `{}`)); err != nil {
		t.Fatal(err)
	}
	defer close(releaseSpec) // even when the test fails: a held handler holds its Consume's stop
	eventually(t, "the status message is delivered", func() bool {
		// The status consumer may still be being created as the spec handler starts.
		c, err := js.Consumer(testContext(t), events.StreamStatus, testDurable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return false
		}
		if err != nil {
			t.Fatalf("consumer %s: %v", events.StreamStatus, err)
		}
		info, err := c.Info(testContext(t))
		return err == nil && info.NumAckPending == 1
	})
	releaseSpec <- struct{}{}
	receive(t, "the status handler to run", statusRan)
}

// advisory is the part of a JetStream consumer advisory the tests check.
type advisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
	Reason     string `json:"reason"`
}

func TestConsumeTerminatesPermanentFailuresIntoDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	js, _ := eventstest.JetStream(t)
	permanent := appendSpec(t, js, vm("vm-a"), 0, `{}`)
	ack, err := js.PublishMsg(ctx, &nats.Msg{
		Subject: events.SpecSubject(vm("vm-b")), Data: []byte(`{}`), Header: nats.Header{events.HeaderOp: {"frob"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	malformed := ack.Sequence

	runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		if _, err := events.ParseSpecMsg(msg); err != nil {
			return err
		}
		return fmt.Errorf("class gold missing: %w", events.ErrPermanent)
	})

	dead, err := js.OrderedConsumer(ctx, events.StreamDeadLetter, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + events.StreamSpecs + "." + testDurable},
	})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[uint64]string{}
	for range 2 {
		msg, err := dead.Next(jetstream.FetchMaxWait(waitTimeout))
		if err != nil {
			t.Fatalf("read DEADLETTER: %v", err)
		}
		var a advisory
		if err := json.Unmarshal(msg.Data(), &a); err != nil {
			t.Fatalf("decode advisory: %v", err)
		}
		if a.Stream != events.StreamSpecs || a.Consumer != testDurable || a.Deliveries != 1 {
			t.Errorf("advisory %+v, want stream %s, consumer %s, 1 delivery", a, events.StreamSpecs, testDurable)
		}
		reasons[a.StreamSeq] = a.Reason
	}
	if !strings.Contains(reasons[permanent], "class gold missing") {
		t.Errorf("reason for the permanent failure = %q, want the handler's error", reasons[permanent])
	}
	if !strings.Contains(reasons[malformed], "malformed") {
		t.Errorf("reason for the malformed message = %q, want it to say malformed", reasons[malformed])
	}
}

func TestConsumeRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	appendSpec(t, js, vmA, 0, `{}`)

	deliveries := make(chan uint64, 2)
	runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		meta, err := msg.Metadata()
		if err != nil {
			return err
		}
		deliveries <- meta.NumDelivered
		if meta.NumDelivered == 1 {
			return errors.New("vcenter: connection reset")
		}
		return nil
	})
	first := receive(t, "the first delivery", deliveries)
	start := time.Now()
	second := receive(t, "the redelivery", deliveries)
	if first != 1 || second != 2 {
		t.Errorf("deliveries %d, %d; want 1, 2", first, second)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("redelivered after %v, want the 1s backoff", waited)
	}
	eventually(t, "the redelivery is acked", func() bool {
		return consumerInfo(t, js, events.StreamSpecs).NumAckPending == 0
	})
}

// A handler that panics fails its message like an error would: it is redelivered
// with backoff and Consume goes on.
func TestConsumeRetriesAPanickingHandler(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	appendSpec(t, js, vmA, 0, `{}`)

	deliveries := make(chan uint64, 2)
	r := runConsume(t, js, specConsumer(), func(ctx context.Context, msg jetstream.Msg) error {
		meta, err := msg.Metadata()
		if err != nil {
			return err
		}
		deliveries <- meta.NumDelivered
		if meta.NumDelivered == 1 {
			var m map[string]int
			m["bug"]++ // panics: nil map
		}
		return nil
	})
	if first, second := receive(t, "the first delivery", deliveries), receive(t, "the redelivery", deliveries); first != 1 || second != 2 {
		t.Errorf("deliveries %d, %d; want 1, 2", first, second)
	}
	eventually(t, "the redelivery is acked", func() bool {
		return consumerInfo(t, js, events.StreamSpecs).NumAckPending == 0
	})
	select {
	case <-r.done:
		t.Fatalf("Consume stopped after the panic: %v", r.err)
	default:
	}
}

// TestConsumeKeepsWaitingAndRunningMessagesInProgress shows that a handler
// running longer than AckWait, and the message queued behind it, are not
// redelivered.
func TestConsumeKeepsWaitingAndRunningMessagesInProgress(t *testing.T) {
	t.Parallel()
	js, nc := eventstest.JetStream(t)
	a1 := appendSpec(t, js, vmA, 0, `{"v":1}`)
	appendSpec(t, js, vmA, a1, `{"v":2}`)

	progress := make(chan struct{}, 64)
	sub, err := nc.Subscribe("$JS.ACK.>", func(m *nats.Msg) {
		if string(m.Data) == "+WPI" {
			progress <- struct{}{}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	var calls atomic.Int32
	handled := make(chan struct{}, 2)
	cfg := specConsumer()
	cfg.AckWait = 300 * time.Millisecond
	runConsume(t, js, cfg, func(ctx context.Context, msg jetstream.Msg) error {
		defer func() { handled <- struct{}{} }()
		if calls.Add(1) == 1 {
			for range 4 { // two AckWaits: each message reports progress twice per AckWait
				select {
				case <-progress:
				case <-time.After(waitTimeout):
					t.Error("no progress reported while the handler runs")
					return nil
				}
			}
		}
		return nil
	})
	receive(t, "the first message", handled)
	receive(t, "the second message", handled)
	eventually(t, "both messages are acked", func() bool {
		return consumerInfo(t, js, events.StreamSpecs).NumAckPending == 0
	})
	if got := calls.Load(); got != 2 {
		t.Errorf("handler called %d times, want 2 (no redelivery)", got)
	}
	if got := consumerInfo(t, js, events.StreamSpecs).NumRedelivered; got != 0 {
		t.Errorf("%d messages redelivered, want 0", got)
	}
}

func TestConsumeFailsWhenItsConsumerIsDeleted(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	r := runConsume(t, js, specConsumer(), func(context.Context, jetstream.Msg) error { return nil })
	eventually(t, "the consumer waits for messages", func() bool {
		c, err := js.Consumer(testContext(t), events.StreamSpecs, testDurable)
		if err != nil {
			return false
		}
		info, err := c.Info(testContext(t))
		return err == nil && info.NumWaiting > 0 // a pull that the deletion will answer
	})
	if err := js.DeleteConsumer(testContext(t), events.StreamSpecs, testDurable); err != nil {
		t.Fatal(err)
	}
	receive(t, "Consume to return", r.done)
	if r.err == nil {
		t.Error("Consume returned nil after its consumer was deleted, want an error")
	}
}

// TestConsumeCoalescesWaitingMessages shows that with Coalesce, the messages of a key that
// arrive while its handler runs are handled by one more call, and all of them are acked.
func TestConsumeCoalescesWaitingMessages(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	seq := appendSpec(t, js, vm("vm-a"), 0, `{"v":1}`)
	entered, release := make(chan uint64, 10), make(chan struct{})
	marked := make(chan struct{}, 1)
	cfg := specConsumer()
	cfg.Coalesce = true
	runConsume(t, js, cfg, func(ctx context.Context, msg jetstream.Msg) error {
		rec, err := events.ParseSpecMsg(msg)
		if err != nil {
			return err
		}
		if rec.Ref == vm("marker") {
			marked <- struct{}{}
			return nil
		}
		entered <- rec.Seq
		<-release
		return nil
	})
	receive(t, "the first call", entered)
	for v := 2; v <= 5; v++ { // arrive while the first call runs
		seq = appendSpec(t, js, vm("vm-a"), seq, fmt.Sprintf(`{"v":%d}`, v))
	}
	// The consumer hands messages over in stream order, so once a later message of another
	// key reaches its handler the four have joined vm-a's waiting call (delivered by the
	// server is not enough: the client may not have taken them yet).
	appendSpec(t, js, vm("marker"), 0, `{}`)
	receive(t, "the marker's call", marked)
	close(release)
	receive(t, "the call for the waiting messages", entered)
	eventually(t, "every message acked", func() bool {
		info := consumerInfo(t, js, events.StreamSpecs)
		return info.NumAckPending == 0 && info.AckFloor.Consumer == 6
	})
	select {
	case s := <-entered:
		t.Errorf("a third call (for message %d): the four waiting messages should have shared one", s)
	default:
	}
}

// A consumer creation the server leaves unanswered (a freshly formed cluster drops some
// while it elects leaders) is asked again, not the end of Consume: the part would exit at
// start otherwise.
func TestConsumeAsksAgainWhenCreationIsUnanswered(t *testing.T) {
	t.Parallel()
	s := eventstest.Server(t)
	setup, _ := eventstest.Connect(t, s)
	if err := events.Setup(testContext(t), setup); err != nil {
		t.Fatal(err)
	}
	appendSpec(t, setup, vm("vm-1"), 0, `{}`)
	var lost atomic.Int32
	js := eventstest.Lossy(t, s, 500*time.Millisecond, func(subject string, _ *nats.Msg, _ *string) bool {
		return strings.HasPrefix(subject, "$JS.API.CONSUMER.CREATE."+events.StreamSpecs+".") && lost.Add(1) == 1
	})

	got := make(chan struct{}, 1)
	r := runConsume(t, js, specConsumer(), func(context.Context, jetstream.Msg) error {
		select {
		case got <- struct{}{}:
		default:
		}
		return nil
	})
	select {
	case <-got:
		if lost.Load() != 2 {
			t.Errorf("the consumer was asked for %d times, want 2 (one lost)", lost.Load())
		}
	case <-r.done:
		t.Fatalf("Consume returned after one unanswered creation: %v", r.err)
	case <-time.After(waitTimeout):
		t.Fatal("no message handled after one unanswered creation")
	}
}

// A consumer stopped before it was set up (its service stopped as it started) is stopped,
// not failed: Consume returns nil and hands nothing out.
func TestConsumeStoppedWhileSettingUpReturnsNil(t *testing.T) {
	t.Parallel()
	js, _ := eventstest.JetStream(t)
	appendSpec(t, js, vm("vm-1"), 0, `{}`)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	handed := false
	err := events.Consume(ctx, js, specConsumer(), nil, func(context.Context, jetstream.Msg) error {
		handed = true
		return nil
	})
	if err != nil || handed {
		t.Errorf("Consume stopped before it began: %v, handed a message %v; want nil and none", err, handed)
	}
}
