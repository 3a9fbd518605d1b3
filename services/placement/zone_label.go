package placement

import (
	"context"
	"fmt"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// setZoneLabel records the chosen zone in the VM's metadata (api-rules §4: "VM service
// after placement"), the one place where placement writes SPECS: it appends the record it
// reconciled with the label added, compare-and-swap on that record, generation unchanged
// (metadata is not spec). A concurrent change makes it fail with events.ErrConflict, and
// the retried reconcile sees the newer record.
func (r *reconciler) setZoneLabel(ctx context.Context, o reconcile.Object, zone string) error {
	body, err := model.SetMetadataEntry(o.Spec.Body, "labels", model.LabelZone, zone)
	if err != nil {
		return fmt.Errorf("%w: label %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, r.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("set zone label of %s: %w", o.Ref, err)
	}
	return nil
}
