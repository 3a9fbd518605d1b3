package reconcile

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
)

// Placed reads placement's slice of a VirtualMachine: whether the vSphere VM is created
// and, then, its moref (status.uniqueID), by which the services that act on a created VM
// find it (vcenter.ReadVM).
func Placed(o Object) (uniqueID string, created bool) {
	s := o.Slices[model.ServicePlacement]
	if len(s.Status) == 0 {
		return "", false
	}
	var st struct {
		UniqueID   string             `json:"uniqueID"`
		Conditions []metav1.Condition `json:"conditions"`
	}
	if json.Unmarshal(s.Status, &st) != nil || !IsTrue(st.Conditions, model.ConditionCreated) {
		return "", false
	}
	return st.UniqueID, true
}
