package placement

import (
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// ovfProvisioning is spec.advanced.defaultVolumeProvisioningMode as a content library deploy
// takes it (an OVF import's disk provisioning).
var ovfProvisioning = map[model.VolumeProvisioningMode]string{
	model.VolumeProvisioningModeThin:           string(types.OvfCreateImportSpecParamsDiskProvisioningTypeThin),
	model.VolumeProvisioningModeThick:          string(types.OvfCreateImportSpecParamsDiskProvisioningTypeThick),
	model.VolumeProvisioningModeThickEagerZero: string(types.OvfCreateImportSpecParamsDiskProvisioningTypeEagerZeroedThick),
}

// provisionedBacking is the backing a full clone's disk locator asks for to give the copy
// the provisioning mode.
func provisionedBacking(mode model.VolumeProvisioningMode) *types.VirtualDiskFlatVer2BackingInfo {
	return &types.VirtualDiskFlatVer2BackingInfo{
		DiskMode:        string(types.VirtualDiskModePersistent),
		ThinProvisioned: types.NewBool(mode == model.VolumeProvisioningModeThin),
		EagerlyScrub:    types.NewBool(mode == model.VolumeProvisioningModeThickEagerZero),
	}
}
