package model

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestHostNameRules(t *testing.T) {
	invalid := field.ErrorTypeInvalid
	names := func(host, domain string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { devNetwork(vm).HostName, devNetwork(vm).DomainName = host, domain }
	}
	windows := func(host string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			vm.Spec.GuestID = "windows2019srv_64Guest"
			devNetwork(vm).HostName = host
		}
	}
	sysprepNamed := func(host string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{Sysprep: &VirtualMachineBootstrapSysprepSpec{
				RawSysprep: &SecretKeySelector{Name: "unattend", Key: "xml"}}}
			devNetwork(vm).HostName = host
		}
	}
	label50 := strings.Repeat("a", 50)
	longDomain := strings.Join([]string{label50, label50, label50, label50, "com"}, ".") // 207 characters
	runDevCases(t, []devCase{
		{name: "HN-1 host name from metadata.name", code: 200},
		{name: "HN-1 label host name, Unicode letters and symbols", vm: names("café+01", ""), code: 200},
		{name: "HN-1 IP host name", vm: names("10.0.0.5", ""), code: 200},
		{name: "HN-1 host name with underscore", vm: names("web_01", ""), code: 422,
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-1 metadata.name with dots as host name", vm: func(vm *VirtualMachine) { vm.Name = "web.example" }, code: 422,
			errs: []devErr{{invalid, "metadata.name"}}},
		{name: "HN-1 only the first failing rule is reported", vm: names("-web", "bad_domain"), code: 422,
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-2 label host name with domain", vm: names("web", "example.com"), code: 200},
		{name: "HN-2 IP host name with domain", vm: names("10.0.0.5", "example.com"), code: 422,
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-3 Windows host name of 15 characters", vm: windows("abcdefghijklmno"), code: 200},
		{name: "HN-3 Windows host name of 16 characters", vm: windows("abcdefghijklmnop"), code: 422,
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-3 Sysprep makes a guest Windows", vm: sysprepNamed("abcdefghijklmnop"), code: 422,
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-3 long name kept by a stored Sysprep VM", old: sysprepNamed("abcdefghijklmnop"), code: 200,
			vm: func(vm *VirtualMachine) { vm.Labels = map[string]string{"app": "web"} }},
		{name: "HN-3 long name of a stored non-Sysprep Windows VM", old: windows("abcdefghijklmnop"), code: 422,
			vm:   func(vm *VirtualMachine) { vm.Labels = map[string]string{"app": "web"} },
			errs: []devErr{{invalid, "spec.network.hostName"}}},
		{name: "HN-4 multi-label domain", vm: names("web", "corp.example.com"), code: 200},
		{name: "HN-4 one-character top-level domain", vm: names("web", "example.c"), code: 422,
			errs: []devErr{{invalid, "spec.network.domainName"}}},
		{name: "HN-4 underscore in domain", vm: names("web", "my_corp.example.com"), code: 422,
			errs: []devErr{{invalid, "spec.network.domainName"}}},
		{name: "HN-5 FQDN of 255 characters", vm: names(strings.Repeat("h", 47), longDomain), code: 200},
		{name: "HN-5 FQDN over 255 characters", vm: names(strings.Repeat("h", 63), longDomain), code: 422,
			errs: []devErr{{invalid, "spec.network"}}},
	})
}
