package events

import (
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// batch is the messages of one key that one handler call stands for: the first that came
// and those that came while it waited for its turn.
type batch struct {
	msgs  []jetstream.Msg
	stops []func() // their keepInProgress
}

// coalescer gathers, per key, the messages that arrive while a handler call of that key
// is queued and has not started, into that call ([ConsumerConfig.Coalesce]).
type coalescer struct {
	on bool

	mu      sync.Mutex
	waiting map[string]*batch // the queued, not yet started, call of each key
}

func newCoalescer(on bool) *coalescer {
	return &coalescer{on: on, waiting: map[string]*batch{}}
}

// add puts msg into the waiting call of key and returns false, or, when none waits (or
// coalescing is off), returns a new batch for a call the caller must queue.
func (c *coalescer) add(key string, msg jetstream.Msg, stop func()) (*batch, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.waiting[key]; c.on && b != nil {
		b.msgs, b.stops = append(b.msgs, msg), append(b.stops, stop)
		return b, false
	}
	b := &batch{msgs: []jetstream.Msg{msg}, stops: []func(){stop}}
	if c.on {
		c.waiting[key] = b
	}
	return b, true
}

// start closes b to new messages as its call begins: one arriving from now on may
// announce a change the call does not see, so it needs a call of its own.
func (c *coalescer) start(key string, b *batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting[key] == b {
		delete(c.waiting, key)
	}
}
