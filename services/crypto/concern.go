package crypto

import (
	"encoding/json"
	"slices"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// concern is what crypto does not read of a VM (reconcile.Config.Concern): the storage
// controllers, the schema upgrade's stamps, the zone label, the generations of placement's and power's
// slices, all of power's slice but its powerState (and all of it while the VM is in
// sync: nothing waits for the VM to be off then), the other slices until the VM is
// created, and the volumes while its last report shows nothing encrypted: a disk of an
// encrypted VM counts in status.crypto. Until it reports the VM in sync, every change
// retries.
func concern(o reconcile.Object) reconcile.Ignored {
	prev := o.Slices[model.ServiceCrypto]
	conds, err := reconcile.SliceConditions(prev)
	synced := err == nil && reconcile.IsTrue(conds, model.ConditionEncryptionSynced)
	ign := reconcile.Ignored{
		Spec: slices.Concat(reconcile.VMUpgradeStamps, reconcile.VMControllers, []reconcile.Path{reconcile.VMZoneLabel}),
		// Power's slice only wakes crypto when a VM goes off; what it is, vCenter says.
		OnlyOfInputs:     map[string][]reconcile.Path{model.ServicePower: {{"powerState"}}},
		InputGenerations: true,
		Unsettled:        err != nil || len(prev.Status) > 0 && !synced,
	}
	if synced {
		ign.UnreadInputs = append(ign.UnreadInputs, model.ServicePower)
	}
	ign.UnreadUntilCreated(o, model.ServicePlacement, model.ServicePower)
	if !reportsEncryption(prev.Status) {
		ign.Spec = append(ign.Spec, reconcile.VMVolumes)
	}
	return ign
}

// reportsEncryption tells whether crypto's slice status reports anything encrypted; an
// unreadable one does, to be safe.
func reportsEncryption(status json.RawMessage) bool {
	if len(status) == 0 {
		return false
	}
	var st model.VirtualMachineStatus
	if json.Unmarshal(status, &st) != nil {
		return true
	}
	return st.Crypto != nil && len(st.Crypto.Encrypted) > 0
}
