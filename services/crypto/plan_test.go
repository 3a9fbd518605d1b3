package crypto

import (
	"slices"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/reconcile"
)

// makePlan's decisions by the seed's rules, without vCenter.
func TestMakePlan(t *testing.T) {
	key := func(provider, id string) *types.CryptoKeyId {
		return &types.CryptoKeyId{KeyId: id, ProviderId: &types.KeyProviderId{Id: provider}}
	}
	disk := func(k *types.CryptoKeyId) *types.VirtualDisk {
		return &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Backing: &types.VirtualDiskFlatVer2BackingInfo{KeyId: k}}}
	}
	encDisks := reconcile.CryptoAsk{EncryptDisks: true}
	vtpm := reconcile.CryptoAsk{VTPM: true}
	local := &target{provider: "local"}
	tests := []struct {
		name          string
		ask           reconcile.CryptoAsk
		t             *target
		s             vmState
		ops, needOff  []string
		decrypt, keys bool // keys: a key was asked for
	}{
		{name: "nothing asked", ask: reconcile.CryptoAsk{}, t: local, s: vmState{off: true, disks: []*types.VirtualDisk{disk(nil)}}},
		{name: "encrypt while off", ask: encDisks, t: local, s: vmState{off: true, disks: []*types.VirtualDisk{disk(nil)}},
			ops: []string{"encrypt VM"}, keys: true},
		{name: "encrypt while on", ask: encDisks, t: local, s: vmState{disks: []*types.VirtualDisk{disk(nil)}},
			needOff: []string{"encrypt VM"}},
		{name: "keyless class of the same provider", ask: encDisks, t: local,
			s: vmState{key: key("local", "k1"), disks: []*types.VirtualDisk{disk(key("local", "k1"))}}},
		{name: "another key ID rekeys while on", ask: encDisks, t: &target{provider: "local", key: "k2"},
			s: vmState{key: key("local", "k1"), disks: []*types.VirtualDisk{disk(key("local", "k1"))}}, ops: []string{"rekey VM"}, keys: true},
		{name: "another provider rekeys", ask: encDisks, t: &target{provider: "other"},
			s: vmState{key: key("local", "k1"), off: true}, ops: []string{"rekey VM"}, keys: true},
		{name: "no key source: no rekey", ask: encDisks, t: nil, s: vmState{key: key("local", "k1"), off: true}},
		{name: "vTPM added while off", ask: vtpm, t: local, s: vmState{key: key("local", "k1"), off: true}, ops: []string{"add vTPM"}},
		{name: "vTPM waits for power-off", ask: vtpm, t: local, s: vmState{key: key("local", "k1")}, needOff: []string{"add vTPM"}},
		{name: "never decrypts", ask: reconcile.CryptoAsk{}, t: local, s: vmState{key: key("local", "k1"), off: true}, decrypt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			p := makePlan(tt.ask, tt.t, tt.s, func() types.CryptoKeyId { asked = true; return *key("local", "new") })
			if !slices.Equal(p.ops, tt.ops) || !slices.Equal(p.needOff, tt.needOff) || p.decrypt != tt.decrypt || asked != tt.keys {
				t.Errorf("ops %v, needOff %v, decrypt %v, key asked %v; want %v, %v, %v, %v", p.ops, p.needOff, p.decrypt, asked, tt.ops, tt.needOff, tt.decrypt, tt.keys)
			}
			if (len(p.ops) > 0) != (p.spec.Crypto != nil || len(p.spec.DeviceChange) > 0) {
				t.Errorf("ops %v with spec crypto %v and %d device changes", p.ops, p.spec.Crypto, len(p.spec.DeviceChange))
			}
		})
	}
}

// The plan encrypts and rekeys the VM's own disks and its claims' of its storage class (its
// image disks registered as claims), never a claim's volume of another class, which that
// class encrypts or not.
func TestReadStateLeavesOtherClassesVolumes(t *testing.T) {
	own := &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2000}}
	registered := &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2001}, VDiskId: &types.ID{Id: "fcd-image"}}
	other := &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2002}, VDiskId: &types.ID{Id: "fcd-other"}}
	s := readState(&mo.VirtualMachine{Config: &types.VirtualMachineConfigInfo{
		Hardware: types.VirtualHardware{Device: []types.BaseVirtualDevice{own, registered, other}},
	}}, map[string]bool{"fcd-other": true})
	if len(s.disks) != 2 || s.disks[0] != own || s.disks[1] != registered {
		t.Errorf("disks the plan encrypts %v, want the VM's own and its registered image disk", s.disks)
	}
}
