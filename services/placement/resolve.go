package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// class is a resolved VirtualMachineClass.
type class struct {
	applied  model.AppliedClass // what the VM records having been created with
	hw       vcenter.ClassHardware
	instance *model.InstanceStorage // local storage for each VM (instance_storage.go)
}

// resolveClass reads the VM's class from SPECS and sets VirtualMachineClassReady. A missing
// or invalid class is a condition, not an error: the class appearing (a related object)
// triggers the VM again. Only a failed read is an error (retried).
func (r *reconciler) resolveClass(ctx context.Context, namespace, name string, conds *conditions) (*class, error) {
	if name == "" {
		conds.fail(model.ConditionClassReady, model.ReasonNotFound, "spec.className is empty")
		return nil, nil
	}
	ref := events.Ref{Plural: pluralClasses, Namespace: namespace, Name: name}
	body, found, err := r.liveSpec(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !found {
		conds.fail(model.ConditionClassReady, model.ReasonNotFound,
			fmt.Sprintf("VirtualMachineClass %s not found in namespace %s", name, namespace))
		return nil, nil
	}
	var obj model.VirtualMachineClass
	if err := json.Unmarshal(body, &obj); err != nil {
		conds.fail(model.ConditionClassReady, model.ReasonInvalid, fmt.Sprintf("VirtualMachineClass %s: %v", name, err))
		return nil, nil
	}
	hw, err := vcenter.ClassHardwareOf(obj.Spec)
	if err != nil {
		conds.fail(model.ConditionClassReady, model.ReasonInvalid, fmt.Sprintf("VirtualMachineClass %s: %v", name, err))
		return nil, nil
	}
	conds.ok(model.ConditionClassReady)
	applied := model.AppliedClassOf(name, &obj)
	c := &class{applied: applied, hw: hw}
	if obj.Spec.Hardware != nil {
		c.instance = obj.Spec.Hardware.InstanceStorage
	}
	return c, nil
}

// image is a resolved, ready image.
type image struct {
	kind, name      string
	displayName     string
	itemID          string // content library item (a VM template item for type VM), or the template VM's ID (vm-…)
	typ             string // model.ImageType*
	hardwareVersion int32
}

// resolveImage reads spec.image and its status (the storage service's slice, where the
// gateway's seed publishes the facts read from the content library) and sets
// VirtualMachineImageReady (api-rules §8).
func (r *reconciler) resolveImage(ctx context.Context, namespace string, ref *model.ImageRef, conds *conditions) (*image, error) {
	if ref == nil || ref.Name == "" {
		conds.fail(model.ConditionImageReady, model.ReasonNotSet, "spec.image is not set")
		return nil, nil
	}
	kind := ref.Kind
	if kind == "" {
		kind = "VirtualMachineImage"
	}
	var objRef events.Ref
	where := ""
	switch kind {
	case "VirtualMachineImage":
		objRef = events.Ref{Plural: pluralImages, Namespace: namespace, Name: ref.Name}
		where = " in namespace " + namespace
	case "ClusterVirtualMachineImage":
		objRef = events.Ref{Plural: pluralClusterImages, Name: ref.Name}
	default:
		conds.fail(model.ConditionImageReady, model.ReasonUnknownKind,
			fmt.Sprintf("spec.image.kind %q is neither VirtualMachineImage nor ClusterVirtualMachineImage", ref.Kind))
		return nil, nil
	}
	body, found, err := r.liveSpec(ctx, objRef)
	if err != nil {
		return nil, err
	}
	if !found {
		conds.fail(model.ConditionImageReady, model.ReasonNotFound, fmt.Sprintf("%s %s not found%s", kind, ref.Name, where))
		return nil, nil
	}
	var head struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		conds.fail(model.ConditionImageReady, model.ReasonUnknown, fmt.Sprintf("%s %s: %v", kind, ref.Name, err))
		return nil, nil
	}
	rec, err := events.LastStatus(ctx, r.js, objRef, model.ServiceStorage)
	if err != nil && !errors.Is(err, events.ErrNotFound) {
		return nil, err
	}
	if err != nil || rec.Slice.UID != head.Metadata.UID || len(rec.Slice.Status) == 0 {
		conds.fail(model.ConditionImageReady, model.ReasonNotReady, fmt.Sprintf("%s %s has no status yet", kind, ref.Name))
		return nil, nil
	}
	var st model.VirtualMachineImageStatus
	if err := json.Unmarshal(rec.Slice.Status, &st); err != nil {
		conds.fail(model.ConditionImageReady, model.ReasonUnknown, fmt.Sprintf("status of %s %s: %v", kind, ref.Name, err))
		return nil, nil
	}
	if reason, msg, ready := imageReady(st); !ready {
		conds.fail(model.ConditionImageReady, reason, fmt.Sprintf("%s %s is not ready: %s", kind, ref.Name, msg))
		return nil, nil
	}
	img := &image{kind: kind, name: ref.Name, displayName: st.Name, itemID: st.ProviderItemID, typ: st.Type}
	if st.HardwareVersion != nil {
		img.hardwareVersion = *st.HardwareVersion
	}
	switch {
	case img.itemID == "":
		conds.fail(model.ConditionImageReady, model.ReasonNotReady, fmt.Sprintf("%s %s names no content library item or template VM", kind, ref.Name))
		return nil, nil
	case img.typ != model.ImageTypeOVF && img.typ != model.ImageTypeISO && img.typ != model.ImageTypeVM:
		// The inventory publishes images of these types only: this is a damaged status.
		conds.fail(model.ConditionImageReady, model.ReasonInvalid,
			fmt.Sprintf("%s %s has status.type %q, which names no deployable type (OVF, ISO or VM)", kind, ref.Name, img.typ))
		return nil, nil
	}
	conds.ok(model.ConditionImageReady)
	return img, nil
}

// imageReady reads the image's Ready condition: its own reason when False.
func imageReady(st model.VirtualMachineImageStatus) (reason, message string, ready bool) {
	for _, c := range st.Conditions {
		if c.Type != model.ConditionReady {
			continue
		}
		if c.Status == "True" {
			return "", "", true
		}
		reason, message = c.Reason, c.Message
		if reason == "" || reason == model.ReasonFalse {
			reason = model.ReasonNotReady
		}
		if message == "" {
			message = "condition Ready is " + string(c.Status)
		}
		return reason, message, false
	}
	return model.ReasonNotReady, "no Ready condition", false
}

// liveSpec is the latest body of ref; found is false when the object does not exist (never
// did, or its latest record is a tombstone).
func (r *reconciler) liveSpec(ctx context.Context, ref events.Ref) (body []byte, found bool, err error) {
	rec, err := events.LastSpec(ctx, r.js, ref)
	if errors.Is(err, events.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if rec.Op == events.OpDelete {
		return nil, false, nil
	}
	return rec.Body, true, nil
}
