package power_test

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// A VM with a claim in spec.volumes powers on only once storage reports its volumes
// attached (VirtualMachineHardwareVolumesVerified True); one without volumes does not
// wait for that condition (the other tests' VMs).
func TestVolumesHoldFirstPowerOn(t *testing.T) {
	h := start(t)
	h.putStorageClass("my-storage-class", false)
	v := h.createVM("with-volume")
	v.obj.Spec.StorageClass = "my-storage-class"
	v.obj.Spec.Volumes = []model.VirtualMachineVolume{{Name: "data", PersistentVolumeClaim: &model.PersistentVolumeClaimVolumeSource{ClaimName: "my-pvc"}}}
	h.putSpec(v)
	for _, svc := range []string{model.ServicePlacement, model.ServiceStorage, model.ServiceNetwork} {
		h.publishInput(v, svc, metav1.ConditionTrue, model.ReasonTrue)
	}
	h.waitStatus(v, "waiting for the volumes", notSynced(model.ReasonNotSynced, "VirtualMachineHardwareVolumesVerified (not reported by storage)"))

	storage := func(status metav1.ConditionStatus, reason, message string) map[string]any {
		return map[string]any{"conditions": []metav1.Condition{
			{Type: model.ConditionStorageReady, Status: metav1.ConditionTrue, Reason: model.ReasonTrue, ObservedGeneration: v.obj.Generation, LastTransitionTime: metav1.Now().Rfc3339Copy()},
			{Type: model.ConditionHardwareVolumesVerified, Status: status, Reason: reason, Message: message, ObservedGeneration: v.obj.Generation, LastTransitionTime: metav1.Now().Rfc3339Copy()},
		}}
	}
	h.publish(v, model.ServiceStorage, storage(metav1.ConditionFalse, model.ReasonHardwareVolumesMismatch, `volume data: PersistentVolumeClaim "my-pvc" not found`))
	h.waitStatus(v, "waiting for the claim", notSynced(model.ReasonNotSynced, `PersistentVolumeClaim "my-pvc" not found`))
	if got := h.vcPower(v); got != types.VirtualMachinePowerStatePoweredOff {
		t.Fatalf("VM is %s before its volumes are attached, want poweredOff", got)
	}
	h.publish(v, model.ServiceStorage, storage(metav1.ConditionTrue, model.ReasonTrue, ""))
	h.waitStatus(v, "powered on once attached", synced(model.PowerStateOn))
}
