package storage

import (
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// placementStorageProblem is why placement found no datastore for the VM's storage policy
// (vCenter does not know it, or PBM calls no candidate compatible), which this service's
// VirtualMachineStorageReady repeats: the storage condition says why no VM was created.
func placementStorageProblem(o reconcile.Object) (classCheck, bool) {
	conds, err := reconcile.SliceConditions(o.Slices[model.ServicePlacement])
	if err != nil {
		return classCheck{}, false
	}
	c := reconcile.FindCondition(conds, model.ConditionPlacementReady)
	if c == nil || c.Status == "True" || c.Reason != model.ReasonDatastoreNotFound {
		return classCheck{}, false
	}
	return classCheck{reason: model.ReasonDatastoreNotFound, message: c.Message}, true
}
