package inventory

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/pbm"

	"github.com/vmop/vmop/pkg/model"
)

// storageClassObjects are the StorageClasses, each naming the ID of its SPBM profile as vCenter's
// PBM service reports it.
func storageClassObjects(ctx context.Context, c *govmomi.Client) ([]map[string]any, error) {
	pc, err := pbm.NewClient(ctx, c.Client)
	if err != nil {
		return nil, fmt.Errorf("pbm client: %w", err)
	}
	out := make([]map[string]any, 0, len(StorageClasses))
	for _, sc := range StorageClasses {
		id, err := pc.ProfileIDByName(ctx, sc.Policy)
		if err != nil {
			return nil, fmt.Errorf("storage policy of storage class %s: %w", sc.Name, err)
		}
		// The record admission reads (api-rules §9.6): whether the SPBM profile encrypts.
		// vcsim answers "invalid profile ID" for profiles without the capability.
		var labels map[string]string
		if encrypts, err := pc.SupportsEncryption(ctx, id); err == nil && encrypts {
			labels = map[string]string{model.EncryptionEnabledLabel: "true"}
		}
		o := newObject(storageV1, "StorageClass", "", sc.Name, labels)
		o["provisioner"] = "csi.vsphere.vmware.com"
		o["parameters"] = map[string]any{"storagePolicyID": id}
		o["reclaimPolicy"] = "Delete"
		o["volumeBindingMode"] = "Immediate"
		o["allowVolumeExpansion"] = true
		out = append(out, o)
	}
	return out, nil
}
