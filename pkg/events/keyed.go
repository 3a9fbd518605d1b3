package events

import "sync"

// KeyedQueue runs jobs one at a time per key, in the order they were added,
// and jobs of different keys in parallel, at most workers at once.
//
// [Consume] makes one per call unless [ConsumerConfig.Queue] is set: a
// service that consumes several streams shares one queue between its Consume
// calls so that an object is never reconciled twice at the same time.
type KeyedQueue struct {
	slots chan struct{} // one token per running job

	mu      sync.Mutex
	backlog map[string][]func() // a key is present while one of its jobs runs or waits for a slot
}

// NewKeyedQueue returns a queue running at most workers jobs at once (at
// least one).
func NewKeyedQueue(workers int) *KeyedQueue {
	return &KeyedQueue{
		slots:   make(chan struct{}, max(workers, 1)),
		backlog: map[string][]func(){},
	}
}

// Do queues job behind the jobs of the same key, for work that no message carries (a
// periodic resync, a change of a related object). It never blocks.
func (q *KeyedQueue) Do(key string, job func()) { q.add(key, job) }

// add queues job behind the jobs of the same key. It never blocks.
func (q *KeyedQueue) add(key string, job func()) {
	q.mu.Lock()
	if waiting, busy := q.backlog[key]; busy {
		q.backlog[key] = append(waiting, job)
		q.mu.Unlock()
		return
	}
	q.backlog[key] = nil
	q.mu.Unlock()
	go q.drain(key, job)
}

// drain runs the jobs of key one after the other until none is left. One
// drain per busy key keeps the order without a dispatcher.
func (q *KeyedQueue) drain(key string, job func()) {
	for job != nil {
		q.slots <- struct{}{}
		job()
		<-q.slots
		job = q.next(key)
	}
}

// next pops the next job of key, or forgets the key and returns nil.
func (q *KeyedQueue) next(key string) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	waiting := q.backlog[key]
	if len(waiting) == 0 {
		delete(q.backlog, key)
		return nil
	}
	job := waiting[0]
	waiting[0] = nil
	q.backlog[key] = waiting[1:]
	return job
}

// Len is how many jobs run or wait (the queue's depth).
func (q *KeyedQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, waiting := range q.backlog {
		n += 1 + len(waiting)
	}
	return n
}
