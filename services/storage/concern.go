package storage

import (
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what storage does not read of a VM (reconcile.Config.Concern): the zone
// label (placement's slice says the zone) and the generations of its input slices, which
// their services republish for every change of the VM (only what they say counts). Of
// power's slice only powerState wakes storage (a VM powered off takes the changes that
// waited for it; what the VM is, vCenter says): power republishes its slice for every
// prerequisite that changes while it waits, none of which storage reads. Every other part
// of the record concerns storage. Until the VM is created, storage reads no slice but
// placement's reason for finding no datastore, when it has one (policy.go).
func concern(o reconcile.Object) reconcile.Ignored {
	ign := reconcile.Ignored{
		Spec:             []reconcile.Path{reconcile.VMZoneLabel},
		OnlyOfInputs:     map[string][]reconcile.Path{model.ServicePower: {{"powerState"}}},
		InputGenerations: true,
	}
	if _, problem := placementStorageProblem(o); problem {
		ign.UnreadUntilCreated(o, model.ServiceCrypto, model.ServicePower)
	} else {
		ign.UnreadUntilCreated(o, model.ServicePlacement, model.ServiceCrypto, model.ServicePower)
	}
	return ign
}
