package placement

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// imagesDurable is the consumer of the images' storage slices.
var imagesDurable = events.Durable(model.ServicePlacement + "-images")

// watchImageStatus turns an image's new status into reconciles of the VMs that may be
// waiting for it. An image arrives as two messages, its spec (a related object, which the
// loop fans out on) and then its status (the storage service's slice, where the gateway's
// seed puts the facts read from the content library); a VM reconciled between the two
// sees an image that is not ready yet and needs this second nudge.
func watchImageStatus(ctx context.Context, js jetstream.JetStream, trig *reconcile.Trigger) error {
	return events.Consume(ctx, js, events.ConsumerConfig{
		Stream: events.StreamStatus, Durable: imagesDurable,
		FilterSubjects: []string{
			events.ServiceStatusFilter(pluralImages, model.ServiceStorage),
			events.ServiceStatusFilter(pluralClusterImages, model.ServiceStorage),
		},
		Workers: 1,
	}, func(string) string { return "images" }, func(ctx context.Context, msg jetstream.Msg) error {
		image, _, err := events.ParseStatusSubject(msg.Subject())
		if err != nil {
			return fmt.Errorf("%w: %v", events.ErrPermanent, err)
		}
		filter := events.SpecFilter(pluralVMs) // a cluster image may serve every namespace
		if image.Namespace != "" {
			filter = events.NamespaceSpecFilter(pluralVMs, image.Namespace)
		}
		subjects, err := events.Subjects(ctx, js, events.StreamSpecs, filter)
		if err != nil {
			return fmt.Errorf("VMs that may use %s: %w", image, err)
		}
		for _, subj := range subjects {
			if ref, err := events.ParseSpecSubject(subj); err == nil {
				trig.Request(ctx, ref)
			}
		}
		return nil
	})
}
