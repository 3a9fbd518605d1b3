package inventory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vim25/soap"
)

// libraries creates the content libraries on SharedDatastore, uploads each catalog image that
// is missing or incomplete, through an update session as any vCenter client would, and makes
// the VM template items, each right after its library's uploads and before the next library
// is created: Objects, which a gateway starting beside the seed retries until every library
// exists, then finds them.
func (s *seeder) libraries(ctx context.Context) error {
	ds, err := s.finder.Datastore(ctx, SharedDatastore)
	if err != nil {
		return fmt.Errorf("library datastore %s: %w", SharedDatastore, err)
	}
	m := library.NewManager(s.rest)
	for _, lib := range Libraries {
		libID, err := ensureLibrary(ctx, m, lib.Name, ds)
		if err != nil {
			return err
		}
		for _, img := range images {
			if img.library != lib {
				continue
			}
			if err := s.ensureItem(ctx, m, libID, img); err != nil {
				return err
			}
		}
		if err := s.ensureTemplateItems(ctx, m, lib, libID); err != nil {
			return err
		}
	}
	return nil
}

func ensureLibrary(ctx context.Context, m *library.Manager, name string, ds *object.Datastore) (string, error) {
	ids, err := m.FindLibrary(ctx, library.Find{Name: name, Type: "LOCAL"})
	if err != nil {
		return "", fmt.Errorf("find library %s: %w", name, err)
	}
	if len(ids) > 0 {
		return ids[0], nil
	}
	id, err := m.CreateLibrary(ctx, library.Library{
		Name:        name,
		Description: new("VM images of vmop"),
		Type:        "LOCAL",
		Storage:     []library.StorageBacking{{DatastoreID: ds.Reference().Value, Type: "DATASTORE"}},
	})
	if err != nil {
		return "", fmt.Errorf("create library %s: %w", name, err)
	}
	return id, nil
}

// ensureItem keeps a complete item as it is and replaces an incomplete one (an upload cut short).
func (s *seeder) ensureItem(ctx context.Context, m *library.Manager, libID string, img image) error {
	files, err := img.files()
	if err != nil {
		return err
	}
	ids, err := m.FindLibraryItems(ctx, library.FindItem{LibraryID: libID, Name: img.item})
	if err != nil {
		return fmt.Errorf("find library item %s: %w", img.item, err)
	}
	for _, id := range ids {
		complete, err := hasFiles(ctx, m, id, files)
		if err != nil {
			return err
		}
		if complete {
			return nil
		}
		if err := m.DeleteLibraryItem(ctx, &library.Item{ID: id}); err != nil {
			return fmt.Errorf("delete incomplete library item %s: %w", img.item, err)
		}
	}
	return s.uploadItem(ctx, m, libID, img, files)
}

func hasFiles(ctx context.Context, m *library.Manager, itemID string, want []itemFile) (bool, error) {
	have, err := m.ListLibraryItemFiles(ctx, itemID)
	if err != nil {
		return false, fmt.Errorf("files of library item %s: %w", itemID, err)
	}
	sizes := make(map[string]int64, len(have))
	for _, f := range have {
		if f.Size != nil {
			sizes[f.Name] = *f.Size
		}
	}
	for _, f := range want {
		size, ok := sizes[f.Name]
		// A stream-optimized disk is stored converted (vcsim keeps a descriptor and a flat
		// extent), so only its presence says anything; other files are stored as sent.
		if !ok || (!strings.HasSuffix(f.Name, ".vmdk") && size != int64(len(f.Data))) {
			return false, nil
		}
	}
	return true, nil
}

func (s *seeder) uploadItem(ctx context.Context, m *library.Manager, libID string, img image, files []itemFile) error {
	itemID, err := m.CreateLibraryItem(ctx, library.Item{Name: img.item, Type: img.itemType(), LibraryID: libID})
	if err != nil {
		return fmt.Errorf("create library item %s: %w", img.item, err)
	}
	session, err := m.CreateLibraryItemUpdateSession(ctx, library.Session{LibraryItemID: itemID})
	if err != nil {
		return fmt.Errorf("update session for %s: %w", img.item, err)
	}
	for _, f := range files {
		if err := s.uploadFile(ctx, m, session, f); err != nil {
			_ = m.FailLibraryItemUpdateSession(ctx, session)
			return fmt.Errorf("upload %s of %s: %w", f.Name, img.item, err)
		}
	}
	if err := m.CompleteLibraryItemUpdateSession(ctx, session); err != nil {
		return fmt.Errorf("complete upload of %s: %w", img.item, err)
	}
	return waitForFiles(ctx, m, itemID, img.item, files)
}

// waitForFiles waits until the item lists every uploaded file. (Waiting on the update session's
// state instead would race inside vcsim, which flips that state without its lock.)
func waitForFiles(ctx context.Context, m *library.Manager, itemID, name string, files []itemFile) error {
	for {
		complete, err := hasFiles(ctx, m, itemID, files)
		if err != nil || complete {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("upload of %s: %w", name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *seeder) uploadFile(ctx context.Context, m *library.Manager, session string, f itemFile) error {
	sum := sha256.Sum256(f.Data)
	info, err := m.AddLibraryItemFile(ctx, session, library.UpdateFile{
		Name:       f.Name,
		SourceType: "PUSH",
		Size:       int64(len(f.Data)),
		Checksum:   &library.Checksum{Algorithm: "SHA256", Checksum: hex.EncodeToString(sum[:])},
	})
	if err != nil {
		return err
	}
	u, err := url.Parse(info.UploadEndpoint.URI)
	if err != nil {
		return fmt.Errorf("upload endpoint: %w", err)
	}
	p := soap.DefaultUpload
	p.ContentLength = int64(len(f.Data))
	p.Headers = map[string]string{"vmware-api-session-id": s.rest.SessionID()}
	return s.rest.Upload(ctx, bytes.NewReader(f.Data), u, &p)
}
