package crypto

import (
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// observe is status.crypto as api-rules §3 defines it: Config when the VM home has a key
// (config.keyId, whose provider and key are reported), Disks when any disk's backing has
// one, and whether a virtual TPM is present. nil when none of these holds.
func observe(config *types.VirtualMachineConfigInfo) *model.VirtualMachineCryptoStatus {
	if config == nil {
		return nil
	}
	st := &model.VirtualMachineCryptoStatus{}
	if k := config.KeyId; k != nil {
		st.Encrypted = append(st.Encrypted, model.VirtualMachineEncryptionTypeConfig)
		st.KeyID = k.KeyId
		if k.ProviderId != nil {
			st.ProviderID = k.ProviderId.Id
		}
	}
	disks := false
	for _, d := range config.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualTPM:
			st.HasVTPM = true
		case *types.VirtualDisk:
			disks = disks || vcenter.BackingOf(d).KeyID != nil
		}
	}
	if disks {
		st.Encrypted = append(st.Encrypted, model.VirtualMachineEncryptionTypeDisks)
	}
	if len(st.Encrypted) == 0 && !st.HasVTPM {
		return nil
	}
	return st
}
