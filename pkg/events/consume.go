package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler handles one message. ctx carries the message's trace and is
// cancelled when [Consume] stops. The returned error decides the message's
// fate: nil acks it; an error wrapping [ErrPermanent] or [ErrMalformed]
// terminates it (logged; the advisory of a SPECS message lands in DEADLETTER); any other error
// redelivers it after 1s, 2s, 4s … at most a minute. A handler must be
// idempotent: JetStream delivers at least once.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// ConsumerConfig describes a durable pull consumer for [Consume].
type ConsumerConfig struct {
	Stream         string        // e.g. StreamSpecs
	Durable        string        // e.g. Durable("power")
	FilterSubjects []string      // e.g. SpecFilter("virtualmachines"); none: the whole stream
	Workers        int           // keys handled at once; default 4 (ignored when Queue is set)
	MaxDeliver     int           // deliveries before a message is dead-lettered; default 20
	AckWait        time.Duration // default 30s; a waiting or running message is extended every AckWait/2
	Queue          *KeyedQueue   // share one between Consume calls to serialise keys across streams
	// Coalesce: a message only says "look at its key" (a level-triggered handler that reads
	// the current state, not the message). Messages of a key that arrive while a handler
	// call of that key waits for its turn join that call and share its outcome, so a
	// backlog costs one call per key instead of one per message.
	Coalesce bool
}

const (
	defaultWorkers    = 4
	defaultMaxDeliver = 20
	defaultAckWait    = 30 * time.Second
)

func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.Workers <= 0 {
		c.Workers = defaultWorkers
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = defaultMaxDeliver
	}
	if c.AckWait <= 0 {
		c.AckWait = defaultAckWait
	}
	if c.Queue == nil {
		c.Queue = NewKeyedQueue(c.Workers)
	}
	return c
}

// Consume creates or updates the durable pull consumer cfg describes
// (explicit acks, delivering the stream from its start) and hands its
// messages to h until ctx is done; then it waits for running handlers and
// returns nil, also when ctx ended while the consumer was set up. It returns
// an error when the consumer cannot be set up or stops on its own (deleted,
// connection closed).
//
// Messages with the same key(subject) are handled one at a time in arrival
// order, messages with different keys in parallel. A nil key means
// [ObjectKey]: one object at a time, whatever the stream. Several replicas
// may share the durable; per-key order then holds only within each replica,
// and compare-and-swap is the last guard.
func Consume(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, key func(subject string) string, h Handler) error {
	cfg = cfg.withDefaults()
	if key == nil {
		key = ObjectKey
	}
	// A freshly formed cluster leaves some creations unanswered while it elects leaders.
	var cons jetstream.Consumer
	err := Ask(ctx, func(ctx context.Context) (err error) {
		cons, err = js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
			Durable:        cfg.Durable,
			FilterSubjects: cfg.FilterSubjects,
			AckPolicy:      jetstream.AckExplicitPolicy,
			DeliverPolicy:  jetstream.DeliverAllPolicy,
			MaxDeliver:     cfg.MaxDeliver,
			AckWait:        cfg.AckWait,
		})
		return err
	})
	if ctx.Err() != nil {
		return nil // stopped while it set the consumer up: nothing was handed out
	}
	if err != nil {
		return fmt.Errorf("consume %s as %s: %w", cfg.Stream, cfg.Durable, err)
	}

	var jobs sync.WaitGroup
	pending := newCoalescer(cfg.Coalesce)
	// unsubscribed is closed once the consumer's unsubscribe is written on the connection:
	// a message handed back after that reaches the server after it (process).
	unsubscribed := make(chan struct{})
	dispatch := func(msg jetstream.Msg) {
		k := key(msg.Subject())
		b, queue := pending.add(k, msg, keepInProgress(msg, cfg.AckWait/2))
		if !queue {
			return
		}
		jobs.Add(1)
		cfg.Queue.add(k, func() {
			defer jobs.Done()
			pending.start(k, b)
			process(ctx, cfg.Durable, b, h, unsubscribed)
		})
	}
	health := consumerHealth{suspect: make(chan struct{}, 1)}
	cc, err := cons.Consume(dispatch, jetstream.ConsumeErrHandler(health.record))
	if err != nil {
		return fmt.Errorf("consume %s as %s: %w", cfg.Stream, cfg.Durable, err)
	}
	err = health.wait(ctx, js, cfg, cc)
	cc.Stop()
	<-cc.Closed() // no dispatch after this, so jobs.Add cannot race jobs.Wait
	close(unsubscribed)
	jobs.Wait()
	if err != nil {
		return fmt.Errorf("consume %s as %s: %w", cfg.Stream, cfg.Durable, err)
	}
	return nil
}

// process handles a batch's first message inside its CONSUMER span and settles every
// message of the batch by the outcome. A batch a stop cut short is settled once
// unsubscribed is closed: handed back while this consumer's pull is still open, a message
// could be sent straight back to it and dropped there, unseen until the AckWait ran out.
func process(ctx context.Context, durable string, b *batch, h Handler, unsubscribed <-chan struct{}) {
	for _, stop := range b.stops {
		defer stop()
	}
	first := b.msgs[0]
	ctx, span := startProcess(ctx, durable, first.Subject(), first.Headers())
	err := handle(ctx, first, h)
	stopping := ctx.Err() != nil
	if a := ackFor(err, 1, stopping); a.kind == ackTerm {
		slog.Error("message terminated: no retry can handle it", "consumer", durable, "subject", first.Subject(), "reason", a.reason)
	}
	if stopping {
		<-unsubscribed
	}
	for _, msg := range b.msgs {
		delivered := uint64(1)
		if meta, merr := msg.Metadata(); merr == nil {
			delivered = meta.NumDelivered
		}
		if serr := ackFor(err, delivered, stopping).settle(msg); serr != nil {
			span.RecordError(fmt.Errorf("settle message: %w", serr))
		}
	}
	endSpan(span, err)
}

// handle runs h on msg. A panic in h is a failure like any other (the message is
// redelivered with backoff), logged once with its stack: one bad message never takes the
// process down.
func handle(ctx context.Context, msg jetstream.Msg, h Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("message handler panicked", "subject", msg.Subject(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("handle %s: panic: %v", msg.Subject(), r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err // stopping before the handler started: hand it back now
	}
	if _, err := msg.Metadata(); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return h(ctx, msg)
}

// keepInProgress tells the server every interval that msg is still being
// worked on, waiting for its key or running, so that it is not redelivered
// meanwhile. stop ends it and returns once no more progress can be sent.
func keepInProgress(msg jetstream.Msg, every time.Duration) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress() // a lost one only risks a redelivery, which handlers tolerate
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// consumerHealth watches the errors a running consumer reports. A deleted
// consumer shows up as "consumer deleted" to a waiting pull, or only as "no
// responders" to the next one, which a leader election can cause too; so
// both only make wait check whether the consumer still exists.
type consumerHealth struct {
	suspect chan struct{} // capacity 1: a check is due

	mu   sync.Mutex
	last error
}

func (c *consumerHealth) record(_ jetstream.ConsumeContext, err error) {
	c.mu.Lock()
	c.last = err
	c.mu.Unlock()
	if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, nats.ErrNoResponders) {
		select {
		case c.suspect <- struct{}{}:
		default:
		}
	}
}

// wait blocks until ctx is done (nil) or the consumer is gone (an error).
func (c *consumerHealth) wait(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, cc jetstream.ConsumeContext) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-cc.Closed():
			c.mu.Lock()
			defer c.mu.Unlock()
			return fmt.Errorf("stopped: %w", cmp.Or(c.last, errors.New("consumer closed")))
		case <-c.suspect:
			_, err := js.Consumer(ctx, cfg.Stream, cfg.Durable)
			if errors.Is(err, jetstream.ErrConsumerNotFound) {
				return err
			}
		}
	}
}
