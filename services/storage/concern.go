package storage

import "github.com/vmop/vmop/pkg/reconcile"

// concern is what storage does not read of a VM (reconcile.Config.Concern): the zone
// label (placement's slice says the zone) and the generations of placement's and crypto's
// slices, which they republish for every change of the VM (only what they say counts).
// Every other part of the record concerns storage.
func concern(reconcile.Object) reconcile.Ignored {
	return reconcile.Ignored{Spec: []reconcile.Path{reconcile.VMZoneLabel}, InputGenerations: true}
}
