package placement

import (
	"errors"

	"github.com/vmop/vmop/pkg/model"
)

// hostFilter narrows the hosts that can take a VM before vCenter is asked among them
// (affinity; instance storage): it returns the hosts it keeps, or an error saying why
// none can. vcsim's placement answers ignore rules and capacity, so whatever a placement
// must honour is a filter.
type hostFilter func([]hostCapacity) ([]hostCapacity, error)

// placementFailure is the PlacementReady reason of an error that says where the VM cannot
// go (reported in the condition, retried on the next change or resync), false for an
// error of vCenter or NATS (retried with backoff).
func placementFailure(err error) (string, bool) {
	switch {
	case errors.Is(err, errNoCompatibleDatastore):
		return model.ReasonDatastoreNotFound, true // storage repeats it in VirtualMachineStorageReady
	case errors.Is(err, errNoCapacity):
		return model.ReasonNotReady, true
	case errors.Is(err, errAffinityUnsatisfiable):
		return reasonAffinityUnsatisfiable, true
	case errors.Is(err, errAffinityInvalid):
		return reasonAffinityInvalid, true
	case errors.Is(err, errGroupZone):
		return reasonGroupZoneNotFound, true
	}
	return "", false
}
