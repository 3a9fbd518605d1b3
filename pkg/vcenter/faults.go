package vcenter

import (
	"errors"

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
