package vcenter

import "github.com/vmware/govmomi/vim25/types"

// HardwareVersion turns a VM's config.version ("vmx-19") into 19; 0 when it is none.
func HardwareVersion(s string) int32 {
	v, err := types.ParseHardwareVersion(s)
	if err != nil {
		return 0
	}
	return int32(v)
}
