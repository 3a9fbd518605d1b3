package crypto

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// plan is what brings a VM's encryption in line with what it asks: one reconfigure (spec,
// when ops is not empty), what must wait for the VM to be powered off, and a refusal.
type plan struct {
	spec types.VirtualMachineConfigSpec
	ops  []string // what spec does, for messages: "encrypt VM", "rekey VM", "add vTPM", ...
	// needOff lists what vCenter does only while the VM is powered off; it is not planned.
	needOff []string
	// decrypt: the VM is encrypted but asks for nothing encrypted; vmop never decrypts.
	decrypt bool
}

// vmState is the part of the VM the plan reads.
type vmState struct {
	key *types.CryptoKeyId // config.keyId; nil when the VM home is not encrypted
	off bool
	// disks are those encrypted and rekeyed with the VM (seed, Encryption): its own, and
	// its claims' of its storage class (its image disks registered as claims); a claim's
	// volume of another class has the encryption that class gives.
	disks []*types.VirtualDisk
	vtpm  *types.VirtualTPM
	// applied is the class whose configuration the VM has (vcenter.KeyAppliedClass).
	applied model.AppliedClass
}

// readState reads the VM; otherClass are the CNS volume IDs of its claims of another
// storage class than its own (otherClassVolumes).
func readState(mvm *mo.VirtualMachine, otherClass map[string]bool) vmState {
	s := vmState{off: mvm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff}
	if mvm.Config == nil {
		return s
	}
	s.key = mvm.Config.KeyId
	for _, o := range mvm.Config.ExtraConfig {
		if v := o.GetOptionValue(); v.Key == vcenter.KeyAppliedClass {
			s.applied, _ = model.ParseAppliedClass(fmt.Sprint(v.Value))
		}
	}
	for _, d := range mvm.Config.Hardware.Device {
		switch d := d.(type) {
		case *types.VirtualDisk:
			if d.VDiskId == nil || !otherClass[d.VDiskId.Id] {
				s.disks = append(s.disks, d)
			}
		case *types.VirtualTPM:
			s.vtpm = d
		}
	}
	return s
}

// vtpmAsApplied keeps the VM's vTPM as it is when its class was deleted, or edited since
// the VM got its configuration (vcenter.KeyAppliedClass, recorded by placement's create
// and power's resizes) without asking for same-class resizes: as the seed's Resizing has
// it, a VM takes its class's configuration once, and a later edit of the class only
// through a resize. A spec naming another class is a resize: the vTPM follows that class.
func vtpmAsApplied(ask reconcile.CryptoAsk, s vmState, sameClassResize bool) reconcile.CryptoAsk {
	follows := ask.Class.Name != "" && (ask.Class.Name != s.applied.Name || ask.Class == s.applied || sameClassResize)
	if !follows {
		ask.VTPM = s.vtpm != nil
	}
	return ask
}

// makePlan decides the reconfigure (seed, Encryption): encrypt a VM that asks for
// encryption while it is off (home, disks when the storage class encrypts, and its vTPM);
// rekey an encrypted VM and its encrypted disks with a shallow recrypt when t differs from
// its key; encrypt disks, add or remove the vTPM while off; never decrypt. newKey gives
// the key to encrypt with, called only when one is needed.
func makePlan(ask reconcile.CryptoAsk, t *target, s vmState, newKey func() types.CryptoKeyId) plan {
	var p plan
	if s.key == nil {
		if !ask.Any() || t == nil {
			return p
		}
		if !s.off {
			p.needOff = append(p.needOff, "encrypt VM")
			return p
		}
		key := newKey()
		p.spec.Crypto = &types.CryptoSpecEncrypt{CryptoKeyId: key}
		p.ops = append(p.ops, "encrypt VM")
		p.profile(ask)
		if ask.EncryptDisks {
			p.encryptDisks(ask, s, key)
		}
		if ask.VTPM && s.vtpm == nil {
			p.addVTPM()
		}
		return p
	}

	key := *s.key
	if t != nil && rekeys(t, s.key) {
		key = newKey()
		p.spec.Crypto = &types.CryptoSpecShallowRecrypt{NewKeyId: key}
		p.ops = append(p.ops, "rekey VM")
		for _, d := range s.disks {
			if vcenter.BackingOf(d).KeyID != nil {
				p.editDisk(d, &types.CryptoSpecShallowRecrypt{NewKeyId: key}, "")
			}
		}
	}
	if ask.EncryptDisks && slices.ContainsFunc(s.disks, func(d *types.VirtualDisk) bool { return vcenter.BackingOf(d).KeyID == nil }) {
		if s.off {
			p.ops = append(p.ops, "encrypt disks")
			p.encryptDisks(ask, s, key)
		} else {
			p.needOff = append(p.needOff, "encrypt disks")
		}
	}
	switch {
	case ask.VTPM && s.vtpm == nil && s.off:
		p.addVTPM()
	case ask.VTPM && s.vtpm == nil:
		p.needOff = append(p.needOff, "add vTPM")
	case !ask.VTPM && s.vtpm != nil && s.off:
		p.ops = append(p.ops, "remove vTPM")
		p.spec.DeviceChange = append(p.spec.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: s.vtpm,
		})
	case !ask.VTPM && s.vtpm != nil:
		p.needOff = append(p.needOff, "remove vTPM")
	}
	p.decrypt = !ask.Any()
	return p
}

// profile gives the VM home the encryption storage class's policy: vCenter encrypts
// devices under an encryption policy.
func (p *plan) profile(ask reconcile.CryptoAsk) {
	if ask.StoragePolicyID != "" {
		p.spec.VmProfile = []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: ask.StoragePolicyID}}
	}
}

func (p *plan) encryptDisks(ask reconcile.CryptoAsk, s vmState, key types.CryptoKeyId) {
	for _, d := range s.disks {
		if vcenter.BackingOf(d).KeyID == nil {
			p.editDisk(d, &types.CryptoSpecEncrypt{CryptoKeyId: key}, ask.StoragePolicyID)
		}
	}
}

// editDisk has the reconfigure apply crypto to disk d.
func (p *plan) editDisk(d *types.VirtualDisk, crypto types.BaseCryptoSpec, policy string) {
	ds := &types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: d,
		Backing: &types.VirtualDeviceConfigSpecBackingSpec{Crypto: crypto},
	}
	if policy != "" {
		ds.Profile = []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: policy}}
	}
	p.spec.DeviceChange = append(p.spec.DeviceChange, ds)
}

func (p *plan) addVTPM() {
	p.ops = append(p.ops, "add vTPM")
	p.spec.DeviceChange = append(p.spec.DeviceChange, &types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationAdd,
		Device:    &types.VirtualTPM{VirtualDevice: types.VirtualDevice{Key: -1}},
	})
}

// describe joins what a plan does or waits for: "encrypt VM and add vTPM".
func describe(ops []string) string { return strings.Join(ops, " and ") }
