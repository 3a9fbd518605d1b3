package inventory

import "github.com/vmware/govmomi/vapi/library"

// image is one content library item Seed uploads: an OVF (descriptor plus one disk file per disk)
// or an ISO file. The descriptors are ours and deliberately small, but complete enough for
// vcsim's OVF import (CPU, memory, a paravirtual SCSI controller, disks, a vmxnet3 NIC) and for
// Objects to read every image status field from them.
type image struct {
	item    string
	library ContentLibrary
	ovf     *ovfSpec // nil for an ISO
	isoID   string   // ISO volume identifier, for an ISO
}

// itemType is the content library item type of the image.
func (i image) itemType() string {
	if i.ovf == nil {
		return library.ItemTypeISO
	}
	return library.ItemTypeOVF
}

// cloudInitProperties are the user-configurable OVF properties of cloud images (the
// OVF datasource of cloud-init reads them).
var cloudInitProperties = []ovfProperty{
	{Key: "instance-id", Type: "string", Value: "id-ovf", UserConfigurable: true, Label: "A unique instance ID for this instance"},
	{Key: "hostname", Type: "string", Value: "", UserConfigurable: true, Label: "The hostname of the instance"},
	{Key: "public-keys", Type: "string", Value: "", UserConfigurable: true, Label: "SSH public keys of the default user"},
	{Key: "user-data", Type: "string", Value: "", UserConfigurable: true, Label: "Encoded user-data"},
}

// images is the catalog Seed uploads, in upload order.
var images = []image{
	{item: PhotonImage, library: Library, ovf: &ovfSpec{
		Product: "Photon OS", Vendor: "VMware", Version: "5.0", FullVersion: "5.0.0-20230629",
		OSID: 36, OSType: "vmwarePhoton64Guest", OSVersion: "5",
		Firmware: "efi", HardwareVersion: 19, CPUs: 2, MemoryMiB: 2048,
		Capabilities: []string{"cloud-init"},
		Disks:        []ovfDisk{{CapacityGiB: 20, PopulatedMiB: 1024}},
		Properties:   cloudInitProperties,
	}},
	{item: MultiDiskImage, library: Library, ovf: &ovfSpec{
		Product: "Photon OS with data disk", Vendor: "VMware", Version: "5.0", FullVersion: "5.0.0-20230629",
		OSID: 36, OSType: "vmwarePhoton64Guest", OSVersion: "5",
		Firmware: "efi", HardwareVersion: 19, CPUs: 2, MemoryMiB: 4096,
		Capabilities: []string{"cloud-init"},
		Disks:        []ovfDisk{{CapacityGiB: 20, PopulatedMiB: 1024}, {CapacityGiB: 50, PopulatedMiB: 64}},
		Properties:   cloudInitProperties,
	}},
	{item: MyImage, library: Library, ovf: &ovfSpec{
		Product: "Generic Linux", Vendor: "vmop", Version: "1.0", FullVersion: "1.0.0",
		OSID: 101, OSType: "otherLinux64Guest", OSVersion: "",
		Firmware: "bios", HardwareVersion: 17, CPUs: 1, MemoryMiB: 1024,
		Disks: []ovfDisk{{CapacityGiB: 20, PopulatedMiB: 512}},
	}},
	{item: PhotonISO, library: Library, isoID: "PHOTON_5_X64"},
	{item: UbuntuImage, library: ClusterLibrary, ovf: &ovfSpec{
		Product: "Ubuntu 22.04 LTS", Vendor: "Canonical", Version: "22.04", FullVersion: "22.04-20230302",
		OSID: 94, OSType: "ubuntu64Guest", OSVersion: "22.04",
		Firmware: "bios", HardwareVersion: 19, CPUs: 2, MemoryMiB: 2048,
		Capabilities: []string{"cloud-init"},
		Disks:        []ovfDisk{{CapacityGiB: 10, PopulatedMiB: 768}},
		Properties:   cloudInitProperties,
	}},
	{item: UbuntuISO, library: ClusterLibrary, isoID: "UBUNTU_22_04_LIVE_SERVER"},
}

// files generates the item's files: descriptor first, then the disks, or the ISO.
func (i image) files() ([]itemFile, error) {
	if i.ovf == nil {
		return []itemFile{{Name: i.item + ".iso", Data: iso9660(i.isoID)}}, nil
	}
	disks := i.ovf.diskFiles(i.item)
	desc, err := i.ovf.descriptor(i.item, disks)
	if err != nil {
		return nil, err
	}
	return append([]itemFile{{Name: i.item + ".ovf", Data: []byte(desc)}}, disks...), nil
}
