package events

import "errors"

// Sentinel errors. Callers decide with [errors.Is]; every error returned by
// this package that means one of these wraps it.
var (
	// ErrConflict means a compare-and-swap failed: the subject's last sequence
	// was not the expected one (another writer got there first).
	ErrConflict = errors.New("conflict")

	// ErrNotFound means the subject holds no message.
	ErrNotFound = errors.New("not found")

	// ErrInvalidRef means a [Ref], service or event type cannot be spelled as
	// subject tokens.
	ErrInvalidRef = errors.New("invalid reference")

	// ErrMalformed means a message cannot be decoded: wrong subject shape,
	// bad JSON, unknown operation. [Consume] terminates such messages.
	ErrMalformed = errors.New("malformed message")

	// ErrPermanent marks a handler failure that no retry can fix. A [Handler]
	// wraps it (fmt.Errorf("...: %w", events.ErrPermanent)) and [Consume]
	// terminates the message instead of redelivering it.
	ErrPermanent = errors.New("permanent failure")
)
