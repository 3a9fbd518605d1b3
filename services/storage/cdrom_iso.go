package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/library/finder"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vim25"

	"github.com/vmop/vmop/pkg/model"
)

// isoFinder finds the ISO file of an image: the image's status (this service's own slice
// of it, read from the content library) names the library item, whose storage is the
// file on the library's datastore.
type isoFinder struct {
	js   jetstream.JetStream
	rest *rest.Client
	vim  *vim25.Client
}

// isoImage is an image resolved for a CD-ROM: its ISO file's datastore path, or why it
// cannot back a CD-ROM.
type isoImage struct {
	file, problem string
}

// find resolves the image a CD-ROM names in namespace. Only what can be retried is an
// error; an image that is missing, not ready or not an ISO is a problem.
func (f *isoFinder) find(ctx context.Context, namespace string, ref model.ImageRef) (isoImage, error) {
	st, label, problem, err := imageStatus(ctx, f.js, namespace, ref)
	if err != nil || problem != "" {
		return isoImage{problem: problem}, err
	}
	switch {
	case st.Type != model.ImageTypeISO:
		return isoImage{problem: fmt.Sprintf("%s is of type %q: a CD-ROM needs an ISO image", label, st.Type)}, nil
	case st.ProviderItemID == "":
		return isoImage{problem: fmt.Sprintf("%s names no content library item", label)}, nil
	}
	if _, msg, ready := imageReadiness(st); !ready {
		return isoImage{problem: fmt.Sprintf("%s is not ready: %s", label, msg)}, nil
	}
	file, err := f.itemISO(ctx, st.ProviderItemID)
	if err != nil {
		return isoImage{}, fmt.Errorf("ISO file of %s: %w", label, err)
	}
	if file == "" {
		return isoImage{problem: fmt.Sprintf("the content library item of %s holds no .iso file", label)}, nil
	}
	return isoImage{file: file}, nil
}

// itemISO is the datastore path ("[ds] contentlib-…/item/x.iso") of the item's .iso
// file, "" when it has none.
func (f *isoFinder) itemISO(ctx context.Context, itemID string) (string, error) {
	m := library.NewManager(f.rest)
	storage, err := m.ListLibraryItemStorage(ctx, itemID)
	if err != nil {
		return "", fmt.Errorf("storage of library item %s: %w", itemID, err)
	}
	if err := finder.NewPathFinder(m, f.vim).ResolveLibraryItemStorage(ctx, nil, nil, storage); err != nil {
		return "", fmt.Errorf("resolve storage of library item %s: %w", itemID, err)
	}
	for _, s := range storage {
		for _, uri := range s.StorageURIs {
			if strings.HasSuffix(strings.ToLower(uri), ".iso") {
				return uri, nil
			}
		}
	}
	return "", nil
}

// imageReadiness reads an image's Ready condition.
func imageReadiness(st model.VirtualMachineImageStatus) (reason, message string, ready bool) {
	for _, c := range st.Conditions {
		if c.Type == model.ConditionReady {
			return c.Reason, c.Message, c.Status == "True"
		}
	}
	return model.ReasonNotReady, "no Ready condition", false
}
