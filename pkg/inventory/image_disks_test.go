package inventory

import (
	"testing"

	"github.com/vmware/govmomi/ovf"
)

func TestControllerType(t *testing.T) {
	tests := []struct {
		resourceType ovf.CIMResourceType
		subType      string
		want         string
	}{
		{5, "PIIX4", "IDE"},
		{6, "VirtualSCSI", "SCSI"},
		{6, "lsilogic", "SCSI"},
		{20, "vmware.sata.ahci", "SATA"},
		{20, "vmware.nvme.controller", "NVME"},
		{10, "VmxNet3", ""},
	}
	for _, tt := range tests {
		it := ovf.ResourceAllocationSettingData{}
		it.ResourceType = &tt.resourceType
		it.ResourceSubType = &tt.subType
		if got := controllerType(it); got != tt.want {
			t.Errorf("controllerType(%d, %s) = %q, want %q", tt.resourceType, tt.subType, got, tt.want)
		}
	}
}

func TestQuantityAndHardwareVersion(t *testing.T) {
	for bytes, want := range map[int64]string{20 << 30: "20Gi", 64 << 20: "64Mi", 1000: "1k", 1536: "1536"} {
		if got := quantity(bytes); got != want {
			t.Errorf("quantity(%d) = %s, want %s", bytes, got, want)
		}
	}
	for typ, want := range map[string]int64{"vmx-19": 19, "vmx-13 vmx-17": 13, " vmx-21": 21, "virtualbox-2.2": 0} {
		if got := hardwareVersion(typ); got != want {
			t.Errorf("hardwareVersion(%q) = %d, want %d", typ, got, want)
		}
	}
}
