package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// writeVM appends the VM's record with spec.volumes replaced by vols (unless nil) and
// annotations added, compare-and-swap on the record reconciled, as placement writes its
// zone label; a concurrent change fails with a conflict and the retried reconcile starts
// from the newer record. Replacing the volumes is a spec change: generation counts it, as
// the gateway does. Everything else is kept as stored.
func writeVM(ctx context.Context, js jetstream.JetStream, o reconcile.Object, vols []model.VirtualMachineVolume, annotations map[string]string) error {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(string(o.Spec.Body)))
	dec.UseNumber() // numbers elsewhere in the object stay as written
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	meta := child(obj, "metadata")
	if vols != nil {
		raw, err := json.Marshal(vols)
		if err != nil {
			return fmt.Errorf("%w: encode volumes of %s: %v", events.ErrPermanent, o.Ref, err)
		}
		child(obj, "spec")["volumes"] = json.RawMessage(raw)
		n, _ := meta["generation"].(json.Number)
		gen, _ := n.Int64()
		meta["generation"] = gen + 1
	}
	if len(annotations) > 0 {
		a := child(meta, "annotations")
		for k, v := range annotations {
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
