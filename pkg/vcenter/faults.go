package vcenter

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"

	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/soap"
)

// IsFault tells whether err is vCenter's answer to a request (a task that failed, or a
// SOAP fault) rather than a failure to reach vCenter. Asking the same again gives the same
// answer, so a service reports a fault in a condition instead of retrying at once; the
// other errors are worth a retry.
func IsFault(err error) bool {
	var failed task.Error
	if errors.As(err, &failed) {
		return true
	}
	// soap's predicates look at the error itself, not at what it wraps.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if soap.IsSoapFault(e) || soap.IsVimFault(e) {
			return true
		}
	}
	return false
}

// Unanswered tells whether err is a request that may have reached vCenter without its
// answer reaching the caller: the connection failed, or the caller's time ran out, on the
// way. What it asked for may be done or still running there, so it is neither refused
// (IsFault) nor known not to have happened.
func Unanswered(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr) || errors.As(err, &urlErr)
}
