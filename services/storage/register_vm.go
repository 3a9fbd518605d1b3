package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// vmEdit is what the schema upgrade changes in the VM's record: what is nil stays.
type vmEdit struct {
	volumes     []model.VirtualMachineVolume
	hardware    *model.VirtualMachineHardwareSpec
	annotations map[string]string
}

// applied is a copy of vm with the edit's volumes and hardware, as the record will read
// once written.
func (e vmEdit) applied(vm *model.VirtualMachine) *model.VirtualMachine {
	out := *vm
	if e.volumes != nil {
		out.Spec.Volumes = e.volumes
	}
	if e.hardware != nil {
		out.Spec.Hardware = e.hardware
	}
	return &out
}

// writeVM appends the VM's record with the edit applied (editRecord), as placement writes
// its zone label. A change of the spec counts in generation, as the gateway counts it.
// Everything else is kept as stored.
func writeVM(ctx context.Context, js jetstream.JetStream, o reconcile.Object, e vmEdit) error {
	return editRecord(ctx, js, o.Ref, o.Spec.Body, o.Spec.Seq, "write", func(obj map[string]any) error {
		meta, spec := model.Child(obj, "metadata"), model.Child(obj, "spec")
		changed := false
		for field, value := range map[string]any{"volumes": e.volumes, "hardware": e.hardware} {
			if reflect.ValueOf(value).IsNil() {
				continue
			}
			raw, err := json.Marshal(value)
			if err != nil {
				return fmt.Errorf("%w: encode spec.%s of %s: %v", events.ErrPermanent, field, o.Ref, err)
			}
			spec[field], changed = json.RawMessage(raw), true
		}
		if changed {
			model.CountSpecChange(meta)
		}
		if len(e.annotations) > 0 {
			a := model.Child(meta, "annotations")
			for k, v := range e.annotations {
				a[k] = v
			}
		}
		return nil
	})
}
