package vcenter

import "github.com/vmware/govmomi/vim25/types"

// DiskBacking is what vmop reads of a disk's backing, whatever its kind.
type DiskBacking struct {
	FileName, UUID, DiskMode, Sharing string
	KeyID                             *types.CryptoKeyId // the key that encrypts the disk; nil for none
}

// BackingOf reads d's backing; a kind without a field leaves it empty.
func BackingOf(d *types.VirtualDisk) DiskBacking {
	switch b := d.Backing.(type) {
	case *types.VirtualDiskFlatVer2BackingInfo:
		return DiskBacking{b.FileName, b.Uuid, b.DiskMode, b.Sharing, b.KeyId}
	case *types.VirtualDiskSeSparseBackingInfo:
		return DiskBacking{b.FileName, b.Uuid, b.DiskMode, "", b.KeyId}
	case *types.VirtualDiskSparseVer2BackingInfo:
		return DiskBacking{b.FileName, b.Uuid, b.DiskMode, "", b.KeyId}
	case *types.VirtualDiskRawDiskMappingVer1BackingInfo:
		return DiskBacking{b.FileName, b.Uuid, b.DiskMode, b.Sharing, nil}
	case types.BaseVirtualDeviceFileBackingInfo:
		return DiskBacking{FileName: b.GetVirtualDeviceFileBackingInfo().FileName}
	}
	return DiskBacking{}
}
