package network

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"text/template"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// vApp property values may be Go templates over the VM's intended network configuration
// (api-rules §10), as VM Operator allows: the data is .V1alpha5.Net (Devices with their
// IPAddresses in CIDR form, Gateway4, Gateway6, MacAddress, Nameservers; the global
// Nameservers and SearchSuffixes) and the functions are V1alpha5_FirstIP,
// V1alpha5_FirstIPFromNIC, V1alpha5_IPsFromNIC, V1alpha5_FirstNicMacAddr, V1alpha5_IP,
// V1alpha5_SubnetMask, V1alpha5_FormatIP and V1alpha5_FormatNameservers.

type templateDevice struct {
	IPAddresses        []string
	Gateway4, Gateway6 string
	MacAddress         string
	Nameservers        []string
}

type templateNet struct {
	Devices                     []templateDevice
	Nameservers, SearchSuffixes []string
}

// expandVApp renders every value that holds a template; a template that does not parse
// or run is an error naming its key.
func expandVApp(values map[string]string, vm *model.VirtualMachine, plans []ifacePlan, cards []types.BaseVirtualDevice, dns dnsDefaults) (map[string]string, error) {
	var net templateNet
	net.Nameservers, net.SearchSuffixes = dns.global(vm)
	for i, p := range plans {
		d := templateDevice{IPAddresses: p.addresses, Gateway4: p.gateway4, Gateway6: p.gateway6, Nameservers: p.spec.Nameservers}
		if i < len(cards) {
			d.MacAddress = cards[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress
		}
		net.Devices = append(net.Devices, d)
	}
	data := map[string]any{"V1alpha5": map[string]any{"Net": net}}
	secret := fromSecrets(vm)
	out := make(map[string]string, len(values))
	for k, v := range values {
		if !strings.Contains(v, "{{") {
			out[k] = v
			continue
		}
		var b bytes.Buffer
		t, err := template.New(k).Funcs(templateFuncs(net)).Option("missingkey=error").Parse(v)
		if err == nil {
			err = t.Execute(&b, data)
		}
		switch {
		case err != nil && secret(k):
			// The template's error quotes the value, which a condition must not show.
			return nil, fmt.Errorf("vApp property %q: the value from its Secret is not a template that renders", k)
		case err != nil:
			return nil, fmt.Errorf("vApp property %q: %w", k, err)
		}
		out[k] = b.String()
	}
	return out, nil
}

// fromSecrets tells the vApp properties whose values come from a Secret: every one of a
// rawProperties Secret, or those a property takes from one.
func fromSecrets(vm *model.VirtualMachine) func(key string) bool {
	var va *model.VirtualMachineBootstrapVAppConfigSpec
	if b := vm.Spec.Bootstrap; b != nil {
		va = b.VAppConfig
	}
	return func(key string) bool {
		if va == nil {
			return false
		}
		if va.RawProperties != "" {
			return true
		}
		for _, p := range va.Properties {
			if p.Key == key {
				return p.Value != nil && p.Value.From != nil
			}
		}
		return false
	}
}

func templateFuncs(net templateNet) template.FuncMap {
	nicIPs := func(i int) []string {
		if i < 0 || i >= len(net.Devices) {
			return nil
		}
		return net.Devices[i].IPAddresses
	}
	first := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[0]
	}
	return template.FuncMap{
		"V1alpha5_FirstIP":         func() string { return first(nicIPs(0)) },
		"V1alpha5_FirstIPFromNIC":  func(i int) string { return first(nicIPs(i)) },
		"V1alpha5_IPsFromNIC":      nicIPs,
		"V1alpha5_FirstNicMacAddr": func() string { return firstMAC(net) },
		"V1alpha5_IP": func(cidr string) (string, error) {
			p, err := netip.ParsePrefix(cidr)
			if err != nil {
				return "", err
			}
			return p.Addr().String(), nil
		},
		"V1alpha5_SubnetMask": func(cidr string) (string, error) {
			p, err := netip.ParsePrefix(cidr)
			if err != nil || !p.Addr().Is4() {
				return "", fmt.Errorf("%q is not an IPv4 CIDR", cidr)
			}
			return netmask(p.Bits()), nil
		},
		"V1alpha5_FormatIP":          formatIP,
		"V1alpha5_FormatNameservers": func(count int, delim string) string { return formatNameservers(net.Nameservers, count, delim) },
	}
}

func firstMAC(net templateNet) string {
	if len(net.Devices) == 0 {
		return ""
	}
	return net.Devices[0].MacAddress
}

// formatIP gives addr (an IP or a CIDR) the prefix length of mask (dotted, "/N" or "N");
// an empty mask gives the bare IP.
func formatIP(addr, mask string) (string, error) {
	ip, _, _ := strings.Cut(addr, "/")
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", err
	}
	mask = strings.TrimPrefix(mask, "/")
	if mask == "" {
		return a.String(), nil
	}
	if m, err := netip.ParseAddr(mask); err == nil && m.Is4() {
		b := m.As4()
		bits := 0
		for _, x := range b {
			for ; x&0x80 != 0; x <<= 1 {
				bits++
			}
		}
		return netip.PrefixFrom(a, bits).String(), nil
	}
	var bits int
	if _, err := fmt.Sscanf(mask, "%d", &bits); err != nil {
		return "", fmt.Errorf("mask %q is neither dotted nor a prefix length", mask)
	}
	return netip.PrefixFrom(a, bits).String(), nil
}

// formatNameservers joins the first count nameservers (all for a negative count) with delim.
func formatNameservers(ns []string, count int, delim string) string {
	if count >= 0 && count < len(ns) {
		ns = ns[:count]
	}
	return strings.Join(ns, delim)
}
