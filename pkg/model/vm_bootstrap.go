package model

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var bootstrapPath = specPath.Child("bootstrap")

// validateBootstrap is BS-1..7 and BS-10..15: the allowed provider combinations of
// api-rules §10 and each provider's own constraints. Secrets are not resolved here.
func validateBootstrap(r *vmReq) field.ErrorList {
	b := r.New.Spec.Bootstrap
	if b == nil {
		return nil
	}
	errs := bootstrapCombinationErrors(b)
	if b.CloudInit != nil {
		errs = append(errs, cloudInitErrors(b.CloudInit)...)
	}
	if b.LinuxPrep != nil {
		errs = append(errs, linuxPrepErrors(b.LinuxPrep)...)
	}
	if b.Sysprep != nil {
		errs = append(errs, sysprepErrors(b.Sysprep, r.New.Spec.Network)...)
	}
	if b.VAppConfig != nil {
		errs = append(errs, vAppConfigErrors(b.VAppConfig)...)
		undeclared, err := undeclaredVAppKeys(r)
		if err != nil {
			return append(errs, field.InternalError(bootstrapPath.Child("vAppConfig"), err))
		}
		errs = append(errs, undeclared...)
	}
	return errs
}

// undeclaredVAppKeys refuses vAppConfig properties the VM's image does not declare in its
// OVF environment (status.ovfProperties); an image not found or not yet reported is a
// condition, not an admission error.
func undeclaredVAppKeys(r *vmReq) (field.ErrorList, error) {
	img := r.New.Spec.Image
	if img == nil || r.Env.Lookup == nil || len(r.New.Spec.Bootstrap.VAppConfig.Properties) == 0 {
		return nil, nil
	}
	st, found, err := r.Env.Lookup.Image(r.New.Namespace, *img)
	if err != nil || !found || len(st.OVFProperties) == 0 {
		return nil, err
	}
	declared := map[string]bool{}
	var keys []string
	for _, p := range st.OVFProperties {
		declared[p.Key] = true
		keys = append(keys, p.Key)
	}
	var errs field.ErrorList
	path := bootstrapPath.Child("vAppConfig", "properties")
	for _, p := range r.New.Spec.Bootstrap.VAppConfig.Properties {
		if p.Key != "" && !declared[p.Key] {
			errs = append(errs, field.NotSupported(path.Key(p.Key), p.Key, keys))
		}
	}
	return errs, nil
}

// bootstrapCombinationErrors is BS-1..4: CloudInit alone; LinuxPrep or Sysprep, each with
// an optional vAppConfig; or vAppConfig alone.
func bootstrapCombinationErrors(b *VirtualMachineBootstrapSpec) field.ErrorList {
	var errs field.ErrorList
	ci, lp, sp, va := b.CloudInit != nil, b.LinuxPrep != nil, b.Sysprep != nil, b.VAppConfig != nil
	if ci && (lp || sp || va) {
		errs = append(errs, field.Forbidden(bootstrapPath.Child("cloudInit"), "cloudInit may not be combined with linuxPrep, sysprep or vAppConfig"))
	}
	if lp && (ci || sp) {
		errs = append(errs, field.Forbidden(bootstrapPath.Child("linuxPrep"), "linuxPrep may not be combined with cloudInit or sysprep"))
	}
	if sp && (ci || lp) {
		errs = append(errs, field.Forbidden(bootstrapPath.Child("sysprep"), "sysprep may not be combined with cloudInit or linuxPrep"))
	}
	if va && ci {
		errs = append(errs, field.Forbidden(bootstrapPath.Child("vAppConfig"), "vAppConfig may not be combined with cloudInit"))
	}
	return errs
}

// cloudInitErrors is BS-5..7: one source of user data, and the cloud-config members the
// schema leaves open (runcmd, write_files content) have the shapes cloud-init accepts.
func cloudInitErrors(ci *VirtualMachineBootstrapCloudInitSpec) field.ErrorList {
	path := bootstrapPath.Child("cloudInit")
	if ci.CloudConfig != nil && ci.RawCloudConfig != nil {
		return field.ErrorList{field.Invalid(path, "cloudInit", "cloudConfig and rawCloudConfig are mutually exclusive")}
	}
	if ci.CloudConfig == nil {
		return nil
	}
	ccPath := path.Child("cloudConfig")
	errs := runcmdErrors(ci.CloudConfig.RunCmd, ccPath.Child("runcmds"))
	for _, f := range ci.CloudConfig.WriteFiles {
		if len(f.Content) > 0 && !isStringOrSecretSelector(f.Content) {
			errs = append(errs, field.Invalid(ccPath.Child("write_files").Key(f.Path), string(f.Content),
				"content must be a string or a secret selector with name and key"))
		}
	}
	return errs
}

// runcmdErrors is BS-6: runcmd is a list whose entries are strings or lists of strings.
func runcmdErrors(raw json.RawMessage, path *field.Path) field.ErrorList {
	if len(raw) == 0 {
		return nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return field.ErrorList{field.Invalid(path, string(raw), "runcmd must be a list")}
	}
	var errs field.ErrorList
	for i, e := range entries {
		if !isJSONString(e) && !isJSONStringList(e) {
			errs = append(errs, field.Invalid(path.Index(i), string(e), "must be a string or a list of strings"))
		}
	}
	return errs
}

// isStringOrSecretSelector tells whether a write_files content is a JSON string or a
// {name, key} selector naming both.
func isStringOrSecretSelector(raw json.RawMessage) bool {
	if isJSONString(raw) {
		return true
	}
	var sel SecretKeySelector
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(&sel) == nil && sel.Name != "" && sel.Key != ""
}

func isJSONString(raw json.RawMessage) bool {
	var s string
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &s) == nil
}

// isJSONStringList tells whether raw is a list of strings (nulls are not strings).
func isJSONStringList(raw json.RawMessage) bool {
	var items []json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) || json.Unmarshal(raw, &items) != nil {
		return false
	}
	for _, it := range items {
		if !isJSONString(it) {
			return false
		}
	}
	return true
}

// linuxPrepErrors: a script is inline or from a Secret, not both. vmop delivers the
// VCD-parity fields (password, scriptText, expirePasswordAfterNextLogin; issue #13), so
// BS-8 does not apply.
func linuxPrepErrors(lp *VirtualMachineBootstrapLinuxPrepSpec) field.ErrorList {
	return scriptTextErrors(lp.ScriptText, bootstrapPath.Child("linuxPrep", "scriptText"))
}

func scriptTextErrors(v *ValueOrSecretKeySelector, path *field.Path) field.ErrorList {
	if v != nil && v.Value != nil && v.From != nil {
		return field.ErrorList{field.Invalid(path, "scriptText", "value and from are mutually exclusive")}
	}
	return nil
}

// sysprepErrors is BS-10..12 for Sysprep.
func sysprepErrors(sp *VirtualMachineBootstrapSysprepSpec, network *VirtualMachineNetworkSpec) field.ErrorList {
	path := bootstrapPath.Child("sysprep")
	if (sp.Sysprep != nil) == (sp.RawSysprep != nil) {
		return field.ErrorList{field.Invalid(path, "sysPrep", "exactly one of sysprep and rawSysprep must be set")}
	}
	s := sp.Sysprep
	if s == nil {
		return nil
	}
	inner := path.Child("sysprep")
	errs := scriptTextErrors(s.ScriptText, inner.Child("scriptText"))
	if gu := s.GUIUnattended; gu != nil && gu.AutoLogon {
		if gu.AutoLogonCount == 0 {
			errs = append(errs, field.Invalid(inner, "guiUnattended", "autoLogon requires autoLogonCount"))
		}
		if gu.Password == nil || gu.Password.Name == "" {
			errs = append(errs, field.Invalid(inner, "guiUnattended", "autoLogon requires a password secret"))
		}
	}
	return append(errs, identificationErrors(s.Identification, network, inner)...)
}

// identificationErrors is BS-12: a Windows guest joins either the domain named by
// spec.network.domainName, with credentials, or a workgroup.
func identificationErrors(id *SysprepIdentification, network *VirtualMachineNetworkSpec, path *field.Path) field.ErrorList {
	if id == nil {
		id = &SysprepIdentification{}
	}
	var domain string
	if network != nil {
		domain = network.DomainName
	}
	var errs field.ErrorList
	if domain != "" && id.JoinWorkgroup != "" {
		errs = append(errs, field.Invalid(path, "identification", "spec.network.domainName and joinWorkgroup are mutually exclusive"))
	}
	if domain != "" && (id.DomainAdmin == "" || id.DomainAdminPassword == nil || id.DomainAdminPassword.Name == "") {
		errs = append(errs, field.Invalid(path, "identification", "joining domain spec.network.domainName requires domainAdmin and domainAdminPassword"))
	}
	if id.JoinWorkgroup != "" && (id.DomainAdmin != "" || id.DomainAdminPassword != nil || id.DomainOU != "") {
		errs = append(errs, field.Invalid(path, "identification", "joinWorkgroup excludes domainAdmin, domainAdminPassword and domainOU"))
	}
	return errs
}

// vAppConfigErrors is BS-13..15. Upstream reports the property rules without an index
// (api-rules §0.2).
func vAppConfigErrors(va *VirtualMachineBootstrapVAppConfigSpec) field.ErrorList {
	path := bootstrapPath.Child("vAppConfig")
	if len(va.Properties) > 0 && va.RawProperties != "" {
		return field.ErrorList{field.Invalid(path, "vAppConfig", "properties and rawProperties are mutually exclusive")}
	}
	var errs field.ErrorList
	for _, p := range va.Properties {
		if p.Key == "" {
			errs = append(errs, field.Invalid(path.Child("properties", "key"), "key", "must not be empty"))
		}
		if p.Value != nil && p.Value.Value != nil && p.Value.From != nil {
			errs = append(errs, field.Invalid(path.Child("properties", "value"), "value", "value and from are mutually exclusive"))
		}
	}
	return errs
}

// validateBootstrapProviders is BS-9: non-privileged callers may not remove the
// bootstrap, or a provider of it, from an existing VM; vAppConfig may come and go.
func validateBootstrapProviders(r *vmReq) field.ErrorList {
	if r.Env.Privileged || r.Old.Spec.Bootstrap == nil {
		return nil
	}
	b, ob := r.New.Spec.Bootstrap, r.Old.Spec.Bootstrap
	if b == nil {
		return field.ErrorList{field.Forbidden(bootstrapPath, "the bootstrap section may not be removed")}
	}
	for _, p := range []struct {
		name     string
		had, has bool
	}{
		{"cloudInit", ob.CloudInit != nil, b.CloudInit != nil},
		{"linuxPrep", ob.LinuxPrep != nil, b.LinuxPrep != nil},
		{"sysprep", ob.Sysprep != nil, b.Sysprep != nil},
	} {
		if p.had && !p.has {
			return field.ErrorList{field.Forbidden(bootstrapPath.Child(p.name), "a bootstrap provider may not be removed")}
		}
	}
	return nil
}
