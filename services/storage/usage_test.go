package storage

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/model"
)

// The seed's Storage Quota Usage example: snapshots 5Gi and logs 1Gi count as other use;
// image disk 1 (1Gi used, 10Gi requested) counts its request; PVC 1 (5Gi used, 50Gi
// requested, attached as a Managed volume) counts nowhere, its files neither. Total 16Gi.
func TestStorageUsageFollowsTheSeed(t *testing.T) {
	const gi = int64(1) << 30
	layout := &types.VirtualMachineFileLayoutEx{
		File: []types.VirtualMachineFileLayoutExFileInfo{
			{Key: 1, Type: string(types.VirtualMachineFileLayoutExFileTypeSnapshotData), UniqueSize: 5 * gi},
			{Key: 2, Type: string(types.VirtualMachineFileLayoutExFileTypeLog), UniqueSize: gi},
			{Key: 3, Type: string(types.VirtualMachineFileLayoutExFileTypeDiskDescriptor), UniqueSize: 0},
			{Key: 4, Type: string(types.VirtualMachineFileLayoutExFileTypeDiskExtent), UniqueSize: gi},
			{Key: 5, Type: string(types.VirtualMachineFileLayoutExFileTypeDiskDescriptor), UniqueSize: 0},
			{Key: 6, Type: string(types.VirtualMachineFileLayoutExFileTypeDiskExtent), UniqueSize: 5 * gi},
		},
	}
	vols := []model.VirtualMachineVolumeStatus{
		{Name: "disk-1", Type: model.VolumeTypeClassic, Requested: sizeQuantity(10 * gi), Used: sizeQuantity(gi)},
		{Name: "pvc-1", Type: model.VolumeTypeManaged, Requested: sizeQuantity(50 * gi), Used: sizeQuantity(5 * gi)},
	}
	got := usage(vols, layout)
	for name, tc := range map[string]struct {
		q    *resource.Quantity
		want string
	}{
		"total":           {got.Total, "16Gi"},
		"usage.other":     {got.Usage.Other, "6Gi"},
		"usage.disks":     {got.Usage.Disks, "1Gi"},
		"requested.disks": {got.Requested.Disks, "10Gi"},
	} {
		if tc.q == nil || tc.q.String() != tc.want {
			t.Errorf("status.storage.%s = %v, want %s", name, tc.q, tc.want)
		}
	}
}
