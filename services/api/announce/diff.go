package announce

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/readmodel"
)

// announced is what the announcer last told the world about one VirtualMachine: the
// facts whose change is an event. It is persisted, so a restarted gateway compares the
// next change with what it announced, not with nothing.
type announced struct {
	UID          string                    `json:"uid"`
	Generation   int64                     `json:"generation"`
	Deleting     bool                      `json:"deleting,omitempty"`
	DeleteChecks map[string]string         `json:"deleteChecks,omitempty"` // component → annotation value
	Conditions   map[string]conditionState `json:"conditions,omitempty"`   // by type
}

// conditionState is the part of a condition whose change is announced; a new
// observedGeneration or lastTransitionTime alone is not news.
type conditionState struct {
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason,omitempty"`
	Message string                 `json:"message,omitempty"`
}

// announcement is one CloudEvent to publish.
type announcement struct {
	Type string
	ID   string // deterministic: also the Nats-Msg-Id that collapses repeats
	Data any
}

// deleteBlocked is the data of the delete-blocked event.
type deleteBlocked struct {
	Checks map[string]string `json:"checks"` // component → annotation value
}

// deleteUnblocked is the data of the delete-unblocked event.
type deleteUnblocked struct {
	Removed map[string]string `json:"removed"` // the checks announced blocking, component → value
}

// vmChange is the part of a changed VirtualMachine the announcer reads.
type vmChange struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		Generation        int64             `json:"generation"`
		ResourceVersion   string            `json:"resourceVersion"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

func decodeVMChange(object []byte) (vmChange, error) {
	var vm vmChange
	if err := json.Unmarshal(object, &vm); err != nil {
		return vm, fmt.Errorf("decode changed virtual machine: %w", err)
	}
	if vm.Metadata.UID == "" || vm.Metadata.Name == "" {
		return vm, fmt.Errorf("changed virtual machine %q has no uid", vm.Metadata.Name)
	}
	return vm, nil
}

// facts is what of vm is announced.
func (vm vmChange) facts() *announced {
	a := &announced{
		UID:          vm.Metadata.UID,
		Generation:   vm.Metadata.Generation,
		Deleting:     vm.Metadata.DeletionTimestamp != "",
		DeleteChecks: deleteChecks(vm.Metadata.Annotations),
		Conditions:   map[string]conditionState{},
	}
	for _, c := range vm.Status.Conditions {
		a.Conditions[c.Type] = conditionState{Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	return a
}

func deleteChecks(annotations map[string]string) map[string]string {
	var checks map[string]string
	for k, v := range annotations {
		if component, ok := strings.CutPrefix(k, model.DeleteCheckPrefix); ok {
			if checks == nil {
				checks = map[string]string{}
			}
			checks[component] = v
		}
	}
	return checks
}

// announce compares a change of a VirtualMachine (object, decoded as vm) with what was
// announced about it (prev, nil when nothing was) and returns the events it makes, in
// order, and what is announced after them (nil once the VM is gone).
//
// Event ids are "<uid>/<what>" for what happens once in an object's life (created,
// deleting, deleted) and "<uid>/<what>/<resourceVersion>[/<condition type>]" for what
// may happen again: the resourceVersion is the object's version (the stream positions of
// its record and slices, readmodel.ObjectVersion), so every gateway replica derives the
// same id for the same change and JetStream keeps one.
func announce(prev *announced, typ string, vm vmChange, object []byte) (*announced, []announcement, error) {
	next, out := changes(prev, typ, vm)
	if err := withObject(out, object); err != nil {
		return prev, nil, err
	}
	return next, out, nil
}

// withObject gives the announcements made without data the VM's object as their data
// (eventObject), made once and only when one needs it: most changes announce conditions.
func withObject(anns []announcement, object []byte) error {
	var data json.RawMessage
	for i := range anns {
		if anns[i].Data != nil {
			continue
		}
		if data == nil {
			var err error
			if data, err = eventObject(object); err != nil {
				return err
			}
		}
		anns[i].Data = data
	}
	return nil
}

// changes is announce's comparison; the announcements about the VM's life (created,
// updated, deleting, deleted) carry no data yet: withObject gives them the object.
func changes(prev *announced, typ string, vm vmChange) (*announced, []announcement) {
	uid, rv := vm.Metadata.UID, readmodel.ObjectVersion(vm.Metadata.ResourceVersion) // the same on every gateway
	if typ == readmodel.Deleted {
		if prev != nil && prev.UID != uid {
			return prev, nil // the tombstone of an incarnation replaced long ago
		}
		return nil, []announcement{{events.TypeVirtualMachineDeleted, uid + "/deleted", nil}}
	}
	var out []announcement
	if prev != nil && prev.UID != uid {
		// The name's previous incarnation went while its tombstone was out of reach.
		out = append(out, goneAnnouncement(vm.Metadata.Namespace, vm.Metadata.Name, prev.UID))
		prev = nil
	}
	next := vm.facts()
	if prev == nil {
		out = append(out, announcement{events.TypeVirtualMachineCreated, uid + "/created", nil})
		prev = &announced{UID: uid, Generation: next.Generation}
	}
	// Marking a deletion bumps the generation by one: that is announced as deleting alone.
	startsDeleting := next.Deleting && !prev.Deleting
	if next.Generation != prev.Generation && !(startsDeleting && next.Generation == prev.Generation+1) {
		out = append(out, announcement{events.TypeVirtualMachineUpdated, uid + "/updated/" + rv, nil})
	}
	for _, c := range vm.Status.Conditions {
		if was, ok := prev.Conditions[c.Type]; !ok || was != next.Conditions[c.Type] {
			out = append(out, announcement{events.TypeVirtualMachineConditionChanged,
				uid + "/conditionchanged/" + rv + "/" + c.Type, c})
		}
	}
	if startsDeleting {
		out = append(out, announcement{events.TypeVirtualMachineDeleting, uid + "/deleting", nil})
	}
	if next.Deleting && len(next.DeleteChecks) > 0 && (!prev.Deleting || !maps.Equal(prev.DeleteChecks, next.DeleteChecks)) {
		out = append(out, announcement{events.TypeVirtualMachineDeleteBlocked,
			uid + "/deleteblocked/" + rv, deleteBlocked{Checks: next.DeleteChecks}})
	}
	if next.Deleting && prev.Deleting && len(prev.DeleteChecks) > 0 && len(next.DeleteChecks) == 0 {
		out = append(out, announcement{events.TypeVirtualMachineDeleteUnblocked,
			uid + "/deleteunblocked/" + rv, deleteUnblocked{Removed: prev.DeleteChecks}})
	}
	return next, out
}

// goneAnnouncement is the deleted event of a VM whose last state is no longer known
// (its tombstone was pruned from the change log before it was announced).
func goneAnnouncement(namespace, name, uid string) announcement {
	stub := map[string]any{
		"apiVersion": model.GroupVMOperator + "/" + model.SchemaVersion,
		"kind":       "VirtualMachine",
		"metadata":   map[string]any{"namespace": namespace, "name": name, "uid": uid},
	}
	return announcement{events.TypeVirtualMachineDeleted, uid + "/deleted", stub}
}
