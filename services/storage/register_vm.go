package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

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

// writeVM appends the VM's record with the edit applied, compare-and-swap on the record
// reconciled, as placement writes its zone label; a concurrent change fails with a
// conflict and the retried reconcile starts from the newer record. A change of the spec
// counts in generation, as the gateway counts it. Everything else is kept as stored.
func writeVM(ctx context.Context, js jetstream.JetStream, o reconcile.Object, e vmEdit) error {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(string(o.Spec.Body)))
	dec.UseNumber() // numbers elsewhere in the object stay as written
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	meta, spec := child(obj, "metadata"), child(obj, "spec")
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
		n, _ := meta["generation"].(json.Number)
		gen, _ := n.Int64()
		meta["generation"] = gen + 1
	}
	if len(e.annotations) > 0 {
		a := child(meta, "annotations")
		for k, v := range e.annotations {
			a[k] = v
		}
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("write %s: %w", o.Ref, err)
	}
	return nil
}

// child returns obj[key] as an object, creating it when absent.
func child(obj map[string]any, key string) map[string]any {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}
