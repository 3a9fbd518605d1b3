package events

// DoOnce queues job like [KeyedQueue.Do] unless a job of key is already waiting to start:
// that one reconciles from the state it reads when it starts, so a second would repeat
// it (a resync, or a related change, meeting work already queued). It reports whether
// job was queued. It never blocks.
func (q *KeyedQueue) DoOnce(key string, job func()) bool {
	q.mu.Lock()
	waiting, busy := q.backlog[key]
	switch {
	case len(waiting) > 0:
		q.mu.Unlock()
		return false
	case busy: // running: the job waits behind it, reading what the running one changed
		q.backlog[key] = append(waiting, job)
		q.mu.Unlock()
		return true
	}
	q.backlog[key] = nil
	q.mu.Unlock()
	go q.drain(key, job)
	return true
}
