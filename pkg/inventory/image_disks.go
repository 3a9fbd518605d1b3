package inventory

import (
	"strconv"
	"strings"

	"github.com/vmware/govmomi/ovf"
	"k8s.io/apimachinery/pkg/api/resource"
)

// diskStatus lists the DiskSection disks with their sizes and their controller placement, found
// through the virtual hardware item whose HostResource names the disk.
func diskStatus(env *ovf.Envelope) []any {
	if env.Disk == nil {
		return nil
	}
	var items []ovf.ResourceAllocationSettingData
	if env.VirtualSystem != nil && len(env.VirtualSystem.VirtualHardware) > 0 {
		items = env.VirtualSystem.VirtualHardware[0].Item
	}
	byID := make(map[string]ovf.ResourceAllocationSettingData, len(items))
	for _, it := range items {
		byID[it.InstanceID] = it
	}

	var disks []any
	for _, d := range env.Disk.Disks {
		capacity, _ := strconv.ParseInt(d.Capacity, 10, 64)
		if d.CapacityAllocationUnits != nil {
			capacity *= ovf.ParseCapacityAllocationUnits(*d.CapacityAllocationUnits)
		}
		requested := capacity
		if d.PopulatedSize != nil {
			requested = int64(*d.PopulatedSize)
		}
		disk := map[string]any{"name": d.DiskID, "limit": quantity(capacity), "requested": quantity(requested)}
		for _, it := range items {
			if !refersToDisk(it, d.DiskID) {
				continue
			}
			if n, ok := intOf(it.AddressOnParent); ok {
				disk["unitNumber"] = n
			}
			if it.Parent != nil {
				controller := byID[*it.Parent]
				if typ := controllerType(controller); typ != "" {
					disk["controllerType"] = typ
				}
				if n, ok := intOf(controller.Address); ok {
					disk["controllerBusNumber"] = n
				}
			}
			break
		}
		disks = append(disks, disk)
	}
	return disks
}

func refersToDisk(it ovf.ResourceAllocationSettingData, diskID string) bool {
	for _, r := range it.HostResource {
		if r == "ovf:/disk/"+diskID || r == "/disk/"+diskID {
			return true
		}
	}
	return false
}

// controllerType maps an OVF controller item to VM Operator's controller types.
func controllerType(it ovf.ResourceAllocationSettingData) string {
	if it.ResourceType == nil {
		return ""
	}
	sub := ""
	if it.ResourceSubType != nil {
		sub = strings.ToLower(*it.ResourceSubType)
	}
	switch *it.ResourceType {
	case 5:
		return "IDE"
	case 6:
		return "SCSI"
	case 20: // "Other storage device": SATA (vmware.sata.ahci) or NVMe (vmware.nvme.controller)
		if strings.Contains(sub, "nvme") {
			return "NVME"
		}
		return "SATA"
	}
	return ""
}

// quantity renders bytes the way Kubernetes does: binary suffixes when divisible by 1024.
func quantity(bytes int64) string {
	format := resource.DecimalSI
	if bytes%1024 == 0 {
		format = resource.BinarySI
	}
	return resource.NewQuantity(bytes, format).String()
}

func intOf(s *string) (int64, bool) {
	if s == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 32)
	return n, err == nil
}
