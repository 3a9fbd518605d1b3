package api

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// watchLimit bounds the watches each user has open: every watch holds a goroutine, a
// read-model subscription and a connection, so one user must not hold thousands.
type watchLimit struct {
	max int

	mu   sync.Mutex
	open map[string]int // by user name
}

func newWatchLimit(max int) *watchLimit {
	return &watchLimit{max: max, open: map[string]int{}}
}

// acquire counts one more watch of user, or answers 429 when user has max open; release
// ends it.
func (l *watchLimit) acquire(user string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[user] >= l.max {
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("user %q has %d watches open, the most allowed", user, l.max), 1)
	}
	l.open[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.open[user]--; l.open[user] == 0 {
				delete(l.open, user)
			}
		})
	}, nil
}

// total is how many watches are open, of every user.
func (l *watchLimit) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, open := range l.open {
		n += open
	}
	return n
}
