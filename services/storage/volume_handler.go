package storage

import (
	"context"
	"encoding/json"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// syncVolumes is the VM loop's call into the managed volumes (volume.go): it attaches,
// grows and detaches them and returns what to report, and the VM as it is afterwards.
func (h *handler) syncVolumes(ctx context.Context, o reconcile.Object, vm model.VirtualMachine, vcVM *object.VirtualMachine, mvm mo.VirtualMachine) (volumeReport, mo.VirtualMachine, error) {
	var prev struct {
		Volumes []model.VirtualMachineVolumeStatus `json:"volumes"`
	}
	if s := o.Slices[model.ServiceStorage]; len(s.Status) > 0 {
		_ = json.Unmarshal(s.Status, &prev) // unreadable: no disk is held for an unreadable claim
	}
	return h.volumes.sync(ctx, o.Ref, vm, prev.Volumes, h.readClaim, vcVM, mvm)
}

// condition sets VirtualMachineHardwareVolumesVerified: True when every volume of the
// spec is attached as asked and no removed one is left.
func (r volumeReport) condition(conds *reconcile.ConditionSet) {
	if len(r.problems) == 0 {
		conds.Set(model.ConditionHardwareVolumesVerified, metav1.ConditionTrue, "", "")
		return
	}
	conds.Set(model.ConditionHardwareVolumesVerified, metav1.ConditionFalse, model.ReasonHardwareVolumesMismatch, joinMessages(r.problems...))
}
