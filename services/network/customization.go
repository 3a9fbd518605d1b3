package network

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// keyCustomization is the ExtraConfig key recording the hash of the guest customization
// vCenter accepted for the next power-on, written once the CustomizeVM task succeeded;
// keyCustomizing records the hash of the one about to be handed over, written before the
// task. A redelivery after a crash between the two finds the VM's pending customization
// and the keyCustomizing hash equal and records it instead of customizing twice.
const (
	keyCustomization = "vmop.bootstrap.customization"
	keyCustomizing   = "vmop.bootstrap.customizing"
)

// customizationSpec is the vSphere guest customization of a LinuxPrep or Sysprep
// bootstrap: the identity, the global DNS of the intended configuration and one adapter
// mapping per interface (its MAC, addresses, gateway and DNS). Secret values it needs are
// read through sec.
func customizationSpec(vm *model.VirtualMachine, plans []ifacePlan, cards []types.BaseVirtualDevice, dns dnsDefaults, sec *secrets) (*types.CustomizationSpec, error) {
	b := vm.Spec.Bootstrap
	var identity types.BaseCustomizationIdentitySettings
	var err error
	switch {
	case b.LinuxPrep != nil:
		identity, err = linuxPrep(vm, b.LinuxPrep, sec)
	case b.Sysprep != nil:
		identity, err = sysprep(vm, b.Sysprep, sec)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ns, search := dns.global(vm)
	spec := &types.CustomizationSpec{
		Identity:         identity,
		GlobalIPSettings: types.CustomizationGlobalIPSettings{DnsServerList: ns, DnsSuffixList: search},
	}
	for i, p := range plans {
		m := types.CustomizationAdapterMapping{Adapter: adapterSettings(p, b.Sysprep != nil)}
		if i < len(cards) {
			m.MacAddress = cards[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress
		}
		spec.NicSettingMap = append(spec.NicSettingMap, m)
	}
	return spec, nil
}

// adapterSettings are one interface's IP settings: its first IPv4 address with the mask of
// its prefix (else DHCP), its IPv4 gateway, its IPv6 addresses and gateway, and, for
// Sysprep, its own DNS servers.
func adapterSettings(p ifacePlan, perInterfaceDNS bool) types.CustomizationIPSettings {
	s := types.CustomizationIPSettings{Ip: &types.CustomizationDhcpIpGenerator{}}
	var v6 []types.BaseCustomizationIpV6Generator
	var v6gw []string
	for _, a := range p.addresses {
		pf, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		if pf.Addr().Is4() {
			if _, fixed := s.Ip.(*types.CustomizationFixedIp); !fixed {
				s.Ip = &types.CustomizationFixedIp{IpAddress: pf.Addr().String()}
				s.SubnetMask = netmask(pf.Bits())
			}
			continue
		}
		v6 = append(v6, &types.CustomizationFixedIpV6{IpAddress: pf.Addr().String(), SubnetMask: int32(pf.Bits())})
	}
	if p.gateway4 != "" {
		s.Gateway = []string{p.gateway4}
	}
	if p.gateway6 != "" {
		v6gw = []string{p.gateway6}
	}
	if len(v6) > 0 || p.dhcp6 {
		if p.dhcp6 {
			v6 = append(v6, &types.CustomizationDhcpIpV6Generator{})
		}
		s.IpV6Spec = &types.CustomizationIPSettingsIpV6AddressSpec{Ip: v6, Gateway: v6gw}
	}
	if perInterfaceDNS {
		s.DnsServerList = p.spec.Nameservers
	}
	return s
}

// netmask is the dotted IPv4 mask of a prefix length.
func netmask(bits int) string {
	m := ^uint32(0) << (32 - bits)
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}

func linuxPrep(vm *model.VirtualMachine, lp *model.VirtualMachineBootstrapLinuxPrepSpec, sec *secrets) (*types.CustomizationLinuxPrep, error) {
	id := &types.CustomizationLinuxPrep{
		HostName:   &types.CustomizationFixedName{Name: hostName(vm)},
		Domain:     domainName(vm),
		TimeZone:   lp.TimeZone,
		HwClockUTC: lp.HardwareClockIsUTC,
	}
	if lp.Password != nil {
		v, err := sec.value(lp.Password.Name, keyOr(lp.Password.Key, "password"))
		if err != nil {
			return nil, fmt.Errorf("the root password: %w", err)
		}
		id.Password = &types.CustomizationPassword{Value: v, PlainText: true}
	}
	if lp.ExpirePasswordAfterNextLogin {
		id.ResetPassword = types.NewBool(true)
	}
	script, err := valueOrSecret(lp.ScriptText, sec)
	if err != nil {
		return nil, fmt.Errorf("the script text: %w", err)
	}
	id.ScriptText = script
	return id, nil
}

func sysprep(vm *model.VirtualMachine, sp *model.VirtualMachineBootstrapSysprepSpec, sec *secrets) (types.BaseCustomizationIdentitySettings, error) {
	if raw := sp.RawSysprep; raw != nil {
		v, err := sec.value(raw.Name, raw.Key, "unattend")
		if err != nil {
			return nil, fmt.Errorf("the unattend file: %w", err)
		}
		return &types.CustomizationSysprepText{Value: v}, nil
	}
	s := sp.Sysprep
	id := &types.CustomizationSysprep{
		GuiUnattended: types.CustomizationGuiUnattended{TimeZone: 85},
		UserData: types.CustomizationUserData{
			FullName: s.UserData.FullName, OrgName: s.UserData.OrgName,
			ComputerName: &types.CustomizationFixedName{Name: hostName(vm)},
		},
	}
	if gu := s.GUIUnattended; gu != nil {
		id.GuiUnattended = types.CustomizationGuiUnattended{TimeZone: gu.TimeZone, AutoLogon: gu.AutoLogon, AutoLogonCount: gu.AutoLogonCount}
		if gu.Password != nil {
			v, err := sec.value(gu.Password.Name, keyOr(gu.Password.Key, "password"))
			if err != nil {
				return nil, fmt.Errorf("the administrator password: %w", err)
			}
			id.GuiUnattended.Password = &types.CustomizationPassword{Value: v, PlainText: true}
		}
	}
	if pid := s.UserData.ProductID; pid != nil {
		v, err := sec.value(pid.Name, keyOr(pid.Key, "product_id"))
		if err != nil {
			return nil, fmt.Errorf("the product key: %w", err)
		}
		id.UserData.ProductId = v
	}
	if ro := s.GUIRunOnce; ro != nil && len(ro.Commands) > 0 {
		id.GuiRunOnce = &types.CustomizationGuiRunOnce{CommandList: ro.Commands}
	}
	if lic := s.LicenseFilePrintData; lic != nil {
		id.LicenseFilePrintData = &types.CustomizationLicenseFilePrintData{AutoMode: types.CustomizationLicenseDataMode(lic.AutoMode)}
		if lic.AutoUsers != nil {
			id.LicenseFilePrintData.AutoUsers = *lic.AutoUsers
		}
	}
	if in := s.Identification; in != nil {
		id.Identification = types.CustomizationIdentification{JoinWorkgroup: in.JoinWorkgroup, DomainAdmin: in.DomainAdmin, DomainOU: in.DomainOU}
		if in.DomainAdminPassword != nil {
			v, err := sec.value(in.DomainAdminPassword.Name, keyOr(in.DomainAdminPassword.Key, "domain_admin_password"))
			if err != nil {
				return nil, fmt.Errorf("the domain administrator password: %w", err)
			}
			id.Identification.DomainAdminPassword = &types.CustomizationPassword{Value: v, PlainText: true}
		}
	}
	if d := domainName(vm); d != "" {
		id.Identification.JoinDomain = d
	}
	if s.ExpirePasswordAfterNextLogin {
		id.ResetPassword = types.NewBool(true)
	}
	script, err := valueOrSecret(s.ScriptText, sec)
	if err != nil {
		return nil, fmt.Errorf("the script text: %w", err)
	}
	id.ScriptText = script
	return id, nil
}

func keyOr(key, def string) string {
	if key == "" {
		return def
	}
	return key
}

// valueOrSecret is an inline value or the Secret value it names; "" for none.
func valueOrSecret(v *model.ValueOrSecretKeySelector, sec *secrets) (string, error) {
	switch {
	case v == nil:
		return "", nil
	case v.From != nil:
		return sec.value(v.From.Name, v.From.Key)
	case v.Value != nil:
		return *v.Value, nil
	}
	return "", nil
}

// specHash identifies a customization: equal specs, equal hashes. It is a digest, so the
// ExtraConfig that records it reveals no secret value.
func specHash(spec *types.CustomizationSpec) (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hash customization: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}
