package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
)

// errNoImageStatus: the image has no status of this service yet; the image loop reports
// it shortly.
var errNoImageStatus = errors.New("no status yet")

// imageStatus is the image's status as this service last reported it (its slice of the
// image as it is now), and the image's kind and name for messages; problem says why there
// is none. An image without a status yet is errNoImageStatus.
func imageStatus(ctx context.Context, js jetstream.JetStream, namespace string, ref model.ImageRef) (st model.VirtualMachineImageStatus, label, problem string, err error) {
	var objRef events.Ref
	switch ref.Kind {
	case "", "VirtualMachineImage":
		objRef = events.Ref{Plural: pluralImages, Namespace: namespace, Name: ref.Name}
		label = "VirtualMachineImage " + ref.Name
	case "ClusterVirtualMachineImage":
		objRef = events.Ref{Plural: pluralClusterImages, Name: ref.Name}
		label = "ClusterVirtualMachineImage " + ref.Name
	default:
		return st, "", fmt.Sprintf("image kind %q is neither VirtualMachineImage nor ClusterVirtualMachineImage", ref.Kind), nil
	}
	spec, err := readOwned(ctx, js, objRef)
	if err != nil {
		return st, label, "", err
	}
	if !spec.live {
		return st, label, label + " not found", nil
	}
	rec, err := events.LastStatus(ctx, js, objRef, model.ServiceStorage)
	if errors.Is(err, events.ErrNotFound) || (err == nil && rec.Slice.UID != spec.header.Metadata.UID) {
		return st, label, "", fmt.Errorf("%s has %w", label, errNoImageStatus)
	}
	if err != nil {
		return st, label, "", fmt.Errorf("status of %s: %w", label, err)
	}
	if err := json.Unmarshal(rec.Slice.Status, &st); err != nil {
		return st, label, fmt.Sprintf("status of %s cannot be read: %v", label, err), nil
	}
	return st, label, "", nil
}
