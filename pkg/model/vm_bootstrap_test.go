package model

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestVirtualMachineBootstrapRules(t *testing.T) {
	str := func(s string) *string { return &s }
	yes := true
	bootstrap := func(b VirtualMachineBootstrapSpec) func(*VirtualMachine) {
		return func(vm *VirtualMachine) { vm.Spec.Bootstrap = &b }
	}
	cloudInit := &VirtualMachineBootstrapCloudInitSpec{}
	linuxPrep := &VirtualMachineBootstrapLinuxPrepSpec{HardwareClockIsUTC: &yes}
	rawSysprep := &VirtualMachineBootstrapSysprepSpec{RawSysprep: &SecretKeySelector{Name: "unattend", Key: "xml"}}
	vApp := &VirtualMachineBootstrapVAppConfigSpec{RawProperties: "props"}
	cloudConfig := func(cc CloudConfig) func(*VirtualMachine) {
		return bootstrap(VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{CloudConfig: &cc}})
	}
	file := func(content string) CloudConfig {
		return CloudConfig{WriteFiles: []CloudConfigWriteFile{{Path: "/etc/motd", Content: json.RawMessage(content)}}}
	}
	sysprep := func(s Sysprep, domain string) func(*VirtualMachine) {
		return func(vm *VirtualMachine) {
			s.UserData = SysprepUserData{FullName: "Ops", OrgName: "Example"}
			vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{Sysprep: &VirtualMachineBootstrapSysprepSpec{Sysprep: &s}}
			vm.Spec.Network = &VirtualMachineNetworkSpec{DomainName: domain}
		}
	}
	domainAdmin := &SysprepIdentification{DomainAdmin: "admin", DomainAdminPassword: &DomainPasswordSecretKeySelector{Name: "join"}}
	autoLogon := func(count int32, pw *PasswordSecretKeySelector) Sysprep {
		return Sysprep{GUIUnattended: &SysprepGUIUnattended{AutoLogon: true, AutoLogonCount: count, Password: pw}}
	}
	props := func(p ...KeyValueOrSecretKeySelectorPair) func(*VirtualMachine) {
		return bootstrap(VirtualMachineBootstrapSpec{VAppConfig: &VirtualMachineBootstrapVAppConfigSpec{Properties: p}})
	}
	const bs = "spec.bootstrap"
	const inner = bs + ".sysprep.sysprep"
	runVMCases(t, []vmCase{
		{name: "BS-1 cloudInit alone", change: bootstrap(VirtualMachineBootstrapSpec{CloudInit: cloudInit}), code: 200},
		{name: "BS-1 cloudInit with vAppConfig", change: bootstrap(VirtualMachineBootstrapSpec{CloudInit: cloudInit, VAppConfig: vApp}),
			code: 422, path: bs + ".cloudInit", typ: field.ErrorTypeForbidden},
		{name: "BS-2 linuxPrep with vAppConfig", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: linuxPrep, VAppConfig: vApp}), code: 200},
		{name: "BS-2 linuxPrep with sysprep", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: linuxPrep, Sysprep: rawSysprep}),
			code: 422, path: bs + ".linuxPrep", typ: field.ErrorTypeForbidden},
		{name: "BS-3 sysprep with vAppConfig", change: bootstrap(VirtualMachineBootstrapSpec{Sysprep: rawSysprep, VAppConfig: vApp}), code: 200},
		{name: "BS-3 sysprep with cloudInit", change: bootstrap(VirtualMachineBootstrapSpec{Sysprep: rawSysprep, CloudInit: cloudInit}),
			code: 422, path: bs + ".sysprep", typ: field.ErrorTypeForbidden},
		{name: "BS-4 vAppConfig alone", change: bootstrap(VirtualMachineBootstrapSpec{VAppConfig: vApp}), code: 200},
		{name: "BS-4 vAppConfig with cloudInit", change: bootstrap(VirtualMachineBootstrapSpec{VAppConfig: vApp, CloudInit: cloudInit}),
			code: 422, path: bs + ".vAppConfig", typ: field.ErrorTypeForbidden},

		{name: "BS-5 rawCloudConfig alone", change: bootstrap(VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{
			RawCloudConfig: &SecretKeySelector{Name: "user-data", Key: "user-data"}}}), code: 200},
		{name: "BS-5 cloudConfig and rawCloudConfig", change: bootstrap(VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{
			CloudConfig: &CloudConfig{Timezone: "UTC"}, RawCloudConfig: &SecretKeySelector{Name: "user-data", Key: "user-data"}}}),
			code: 422, path: bs + ".cloudInit", typ: field.ErrorTypeInvalid},
		{name: "BS-6 runcmd of strings and argument lists", change: cloudConfig(CloudConfig{RunCmd: json.RawMessage(`["ls -l /",["sh","-c","echo hi"]]`)}), code: 200},
		{name: "BS-6 runcmd not a list", change: cloudConfig(CloudConfig{RunCmd: json.RawMessage(`"ls"`)}),
			code: 422, path: bs + ".cloudInit.cloudConfig.runcmds", typ: field.ErrorTypeInvalid},
		{name: "BS-6 runcmd entry neither string nor list of strings", change: cloudConfig(CloudConfig{RunCmd: json.RawMessage(`["ls",["sh",1]]`)}),
			code: 422, path: bs + ".cloudInit.cloudConfig.runcmds[1]", typ: field.ErrorTypeInvalid},
		{name: "BS-7 write_files content a string", change: cloudConfig(file(`"hello"`)), code: 200},
		{name: "BS-7 write_files content a secret selector", change: cloudConfig(file(`{"name":"motd","key":"text"}`)), code: 200},
		{name: "BS-7 write_files content a number", change: cloudConfig(file(`42`)),
			code: 422, path: bs + ".cloudInit.cloudConfig.write_files[/etc/motd]", typ: field.ErrorTypeInvalid},
		{name: "BS-7 write_files content a selector without key", change: cloudConfig(file(`{"name":"motd"}`)),
			code: 422, path: bs + ".cloudInit.cloudConfig.write_files[/etc/motd]", typ: field.ErrorTypeInvalid},

		{name: "BS-8 linuxPrep with supported fields", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{TimeZone: "Europe/Sofia"}}), code: 200},
		{name: "BS-8 lifted: linuxPrep expirePasswordAfterNextLogin", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{ExpirePasswordAfterNextLogin: true}}), code: 200},
		{name: "BS-8 lifted: linuxPrep password", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{Password: &PasswordSecretKeySelector{Name: "root"}}}), code: 200},
		{name: "BS-8 lifted: linuxPrep scriptText", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{ScriptText: &ValueOrSecretKeySelector{Value: str("true")}}}), code: 200},
		{name: "linuxPrep scriptText value and from", change: bootstrap(VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{ScriptText: &ValueOrSecretKeySelector{Value: str("true"), From: &SecretKeySelector{Name: "s", Key: "k"}}}}),
			code: 422, path: bs + ".linuxPrep.scriptText", typ: field.ErrorTypeInvalid},
		{name: "BS-8 lifted: sysprep expirePasswordAfterNextLogin", change: sysprep(Sysprep{ExpirePasswordAfterNextLogin: true}, ""), code: 200},
		{name: "BS-8 lifted: sysprep scriptText", change: sysprep(Sysprep{ScriptText: &ValueOrSecretKeySelector{Value: str("rem")}}, ""), code: 200},

		{name: "BS-10 inline sysprep", change: sysprep(Sysprep{}, ""), code: 200},
		{name: "BS-10 sysprep and rawSysprep", change: func(vm *VirtualMachine) {
			sysprep(Sysprep{}, "")(vm)
			vm.Spec.Bootstrap.Sysprep.RawSysprep = rawSysprep.RawSysprep
		}, code: 422, path: bs + ".sysprep", typ: field.ErrorTypeInvalid},
		{name: "BS-10 neither sysprep nor rawSysprep", change: bootstrap(VirtualMachineBootstrapSpec{Sysprep: &VirtualMachineBootstrapSysprepSpec{}}),
			code: 422, path: bs + ".sysprep", typ: field.ErrorTypeInvalid},
		{name: "BS-11 autoLogon with count and password", change: sysprep(autoLogon(1, &PasswordSecretKeySelector{Name: "admin"}), ""), code: 200},
		{name: "BS-11 autoLogon without count", change: sysprep(autoLogon(0, &PasswordSecretKeySelector{Name: "admin"}), ""),
			code: 422, path: inner, typ: field.ErrorTypeInvalid},
		{name: "BS-11 autoLogon without password", change: sysprep(autoLogon(1, nil), ""),
			code: 422, path: inner, typ: field.ErrorTypeInvalid},
		{name: "BS-12 domain join with credentials", change: sysprep(Sysprep{Identification: domainAdmin}, "example.com"), code: 200},
		{name: "BS-12 workgroup", change: sysprep(Sysprep{Identification: &SysprepIdentification{JoinWorkgroup: "WORKGROUP"}}, ""), code: 200},
		{name: "BS-12 domain and workgroup", change: sysprep(Sysprep{Identification: &SysprepIdentification{JoinWorkgroup: "WORKGROUP"}}, "example.com"),
			code: 422, path: inner, typ: field.ErrorTypeInvalid},
		{name: "BS-12 domain without credentials", change: sysprep(Sysprep{Identification: &SysprepIdentification{DomainAdmin: "admin"}}, "example.com"),
			code: 422, path: inner, typ: field.ErrorTypeInvalid},
		{name: "BS-12 workgroup with domain settings", change: sysprep(Sysprep{Identification: &SysprepIdentification{JoinWorkgroup: "WORKGROUP", DomainOU: "OU=vms"}}, ""),
			code: 422, path: inner, typ: field.ErrorTypeInvalid},

		{name: "BS-13 properties alone", change: props(KeyValueOrSecretKeySelectorPair{Key: "hostname", Value: &ValueOrSecretKeySelector{Value: str("web")}}), code: 200},
		{name: "BS-13 properties and rawProperties", change: func(vm *VirtualMachine) {
			props(KeyValueOrSecretKeySelectorPair{Key: "hostname"})(vm)
			vm.Spec.Bootstrap.VAppConfig.RawProperties = "props"
		}, code: 422, path: bs + ".vAppConfig", typ: field.ErrorTypeInvalid},
		{name: "BS-14 property with a key", change: props(KeyValueOrSecretKeySelectorPair{Key: "user"}), code: 200},
		{name: "BS-14 property with empty key", change: props(KeyValueOrSecretKeySelectorPair{Key: ""}),
			code: 422, path: bs + ".vAppConfig.properties.key", typ: field.ErrorTypeInvalid},
		{name: "BS-15 property value from a secret", change: props(KeyValueOrSecretKeySelectorPair{Key: "pw",
			Value: &ValueOrSecretKeySelector{From: &SecretKeySelector{Name: "s", Key: "k"}}}), code: 200},
		{name: "BS-15 property value inline and from a secret", change: props(KeyValueOrSecretKeySelectorPair{Key: "pw",
			Value: &ValueOrSecretKeySelector{Value: str("x"), From: &SecretKeySelector{Name: "s", Key: "k"}}}),
			code: 422, path: bs + ".vAppConfig.properties.value", typ: field.ErrorTypeInvalid},
	})
}

func TestVirtualMachineBootstrapProviderRemoval(t *testing.T) {
	withCloudInit := func(vm *VirtualMachine) {
		vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{CloudInit: &VirtualMachineBootstrapCloudInitSpec{}}
	}
	withLinuxPrepAndVApp := func(vm *VirtualMachine) {
		vm.Spec.Bootstrap = &VirtualMachineBootstrapSpec{LinuxPrep: &VirtualMachineBootstrapLinuxPrepSpec{},
			VAppConfig: &VirtualMachineBootstrapVAppConfigSpec{RawProperties: "props"}}
	}
	runVMCases(t, []vmCase{
		{name: "BS-9 vAppConfig removed", update: true, stored: withLinuxPrepAndVApp,
			change: func(vm *VirtualMachine) { vm.Spec.Bootstrap.VAppConfig = nil }, code: 200},
		{name: "BS-9 bootstrap removed by a privileged user", update: true, stored: withCloudInit, env: asAdmin,
			change: func(vm *VirtualMachine) { vm.Spec.Bootstrap = nil }, code: 200},
		{name: "BS-9 bootstrap removed by a user", update: true, stored: withCloudInit,
			change: func(vm *VirtualMachine) { vm.Spec.Bootstrap = nil }, code: 422, path: "spec.bootstrap", typ: field.ErrorTypeForbidden},
		{name: "BS-9 provider removed by a user", update: true, stored: withLinuxPrepAndVApp,
			change: func(vm *VirtualMachine) { vm.Spec.Bootstrap.LinuxPrep = nil },
			code:   422, path: "spec.bootstrap.linuxPrep", typ: field.ErrorTypeForbidden},
	})
}
