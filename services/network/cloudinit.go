package network

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/vmop/vmop/pkg/model"
)

// The cloud-init data vmop hands to the guest through the guestinfo transport (api-rules
// §10): ExtraConfig keys the VMware datasource of cloud-init reads at boot.
const (
	keyMetadata         = "guestinfo.metadata"
	keyMetadataEncoding = "guestinfo.metadata.encoding"
	keyUserdata         = "guestinfo.userdata"
	keyUserdataEncoding = "guestinfo.userdata.encoding"
	encodingGzipBase64  = "gzip+base64"
)

// userData renders the user data of spec.bootstrap.cloudInit: rawCloudConfig's Secret
// value decoded, or cloudConfig rendered as a cloud-config with its secret values inlined;
// "" when there is neither. A missing Secret or key is a missingSecret.
func userData(ci *model.VirtualMachineBootstrapCloudInitSpec, sec *secrets) (string, error) {
	if raw := ci.RawCloudConfig; raw != nil {
		v, err := sec.value(raw.Name, raw.Key, "user-data", "value")
		if err != nil {
			return "", err
		}
		return decodeUserData(v), nil
	}
	cc := ci.CloudConfig
	if cc == nil {
		return "", nil
	}
	doc := map[string]any{}
	if cc.Timezone != "" {
		doc["timezone"] = cc.Timezone
	}
	if cc.SSHPwdAuth != nil {
		doc["ssh_pwauth"] = *cc.SSHPwdAuth
	}
	var users []any
	if cc.DefaultUserEnabled {
		users = append(users, "default")
	}
	for _, u := range cc.Users {
		user, err := cloudConfigUser(u, sec)
		if err != nil {
			return "", err
		}
		users = append(users, user)
	}
	if len(users) > 0 {
		doc["users"] = users
	}
	if len(cc.RunCmd) > 0 {
		var runcmd []any
		if err := json.Unmarshal(cc.RunCmd, &runcmd); err != nil {
			return "", fmt.Errorf("runcmd is not a list: %w", err)
		}
		doc["runcmd"] = runcmd
	}
	var files []map[string]any
	for _, f := range cc.WriteFiles {
		file, err := writeFile(f, sec)
		if err != nil {
			return "", err
		}
		files = append(files, file)
	}
	if len(files) > 0 {
		doc["write_files"] = files
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("render cloud-config: %w", err)
	}
	return "#cloud-config\n" + string(out), nil
}

// decodeUserData undoes the encodings rawCloudConfig may use (api-rules §10): gzip+base64,
// base64, or none.
func decodeUserData(v string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return v
	}
	if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
		if plain, err := io.ReadAll(zr); err == nil {
			return string(plain)
		}
	}
	return string(b)
}

// cloudConfigUser is one users entry with its password selectors replaced by the values.
func cloudConfigUser(u model.CloudConfigUser, sec *secrets) (map[string]any, error) {
	raw, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("render user %s: %w", u.Name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("render user %s: %w", u.Name, err)
	}
	for key, sel := range map[string]*model.SecretKeySelector{"passwd": u.Passwd, "hashed_passwd": u.HashedPasswd} {
		if sel == nil {
			continue
		}
		v, err := sec.value(sel.Name, sel.Key)
		if err != nil {
			return nil, fmt.Errorf("the %s of user %q: %w", key, u.Name, err)
		}
		out[key] = v
	}
	return out, nil
}

// writeFile is one write_files entry; a content selector is replaced by the Secret value.
func writeFile(f model.CloudConfigWriteFile, sec *secrets) (map[string]any, error) {
	out := map[string]any{"path": f.Path}
	if len(f.Content) > 0 {
		var content string
		if err := json.Unmarshal(f.Content, &content); err != nil {
			var sel model.SecretKeySelector
			if json.Unmarshal(f.Content, &sel) != nil || sel.Name == "" {
				return nil, fmt.Errorf("the content of %s is neither text nor a secret reference", f.Path)
			}
			if content, err = sec.value(sel.Name, sel.Key); err != nil {
				return nil, fmt.Errorf("the content of %s: %w", f.Path, err)
			}
		}
		out["content"] = content
	}
	for k, v := range map[string]string{"encoding": f.Encoding, "owner": f.Owner, "permissions": f.Permissions} {
		if v != "" {
			out[k] = v
		}
	}
	if f.Append {
		out["append"] = true
	}
	if f.Defer {
		out["defer"] = true
	}
	return out, nil
}

// metaData renders the cloud-init meta-data: instance ID, host name (the FQDN when there
// is a domain), the netplan v2 network configuration matching each adapter by its MAC
// address, the default user's keys and wait-on-network.
func metaData(vm *model.VirtualMachine, instanceID string, plans []ifacePlan, cards []types.BaseVirtualDevice, dns dnsDefaults) (string, error) {
	ci := vm.Spec.Bootstrap.CloudInit
	fqdn := hostName(vm)
	if d := domainName(vm); d != "" {
		fqdn += "." + d
	}
	globalNS, globalSearch := dns.global(vm)
	ethernets := map[string]any{}
	for i, p := range plans {
		name := p.spec.GuestDeviceName
		if name == "" {
			name = p.spec.Name
		}
		eth := map[string]any{"set-name": name, "dhcp4": p.dhcp4, "dhcp6": p.dhcp6}
		if i < len(cards) {
			if mac := cards[i].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress; mac != "" {
				eth["match"] = map[string]any{"macaddress": mac}
			}
		}
		if len(p.addresses) > 0 {
			eth["addresses"] = p.addresses
		}
		if p.gateway4 != "" {
			eth["gateway4"] = p.gateway4
		}
		if p.gateway6 != "" {
			eth["gateway6"] = p.gateway6
		}
		if p.spec.MTU != nil {
			eth["mtu"] = *p.spec.MTU
		}
		if len(p.spec.Routes) > 0 {
			eth["routes"] = p.spec.Routes
		}
		ns, search := p.spec.Nameservers, p.spec.SearchDomains
		if len(ns) == 0 && (ci.UseGlobalNameserversAsDefault == nil || *ci.UseGlobalNameserversAsDefault) {
			ns = globalNS
		}
		if len(search) == 0 && (ci.UseGlobalSearchDomainsAsDefault == nil || *ci.UseGlobalSearchDomainsAsDefault) {
			search = globalSearch
		}
		if len(ns) > 0 || len(search) > 0 {
			servers := map[string]any{}
			if len(ns) > 0 {
				servers["addresses"] = ns
			}
			if len(search) > 0 {
				servers["search"] = search
			}
			eth["nameservers"] = servers
		}
		ethernets[name] = eth
	}
	doc := map[string]any{
		"instance-id":    instanceID,
		"local-hostname": fqdn,
		"hostname":       fqdn,
		"network":        map[string]any{"version": 2, "ethernets": ethernets},
	}
	if len(ci.SSHAuthorizedKeys) > 0 {
		doc["public-keys"] = ci.SSHAuthorizedKeys
	}
	if ci.WaitOnNetwork4 != nil || ci.WaitOnNetwork6 != nil {
		doc["wait-on-network"] = map[string]any{"ipv4": ci.WaitOnNetwork4 != nil && *ci.WaitOnNetwork4, "ipv6": ci.WaitOnNetwork6 != nil && *ci.WaitOnNetwork6}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("render meta-data: %w", err)
	}
	return string(out), nil
}

// guestinfo are the ExtraConfig values carrying meta-data and user-data, each gzipped and
// base64-encoded; without user-data its keys are to be absent ("" removes a key).
func guestinfo(meta, user string) (map[string]string, error) {
	out := map[string]string{keyUserdata: "", keyUserdataEncoding: ""}
	var err error
	if out[keyMetadata], err = gzipBase64(meta); err != nil {
		return nil, err
	}
	out[keyMetadataEncoding] = encodingGzipBase64
	if user != "" {
		if out[keyUserdata], err = gzipBase64(user); err != nil {
			return nil, err
		}
		out[keyUserdataEncoding] = encodingGzipBase64
	}
	return out, nil
}

// gzipBase64 compresses without a name or time in the header, so the same data always
// gives the same value and an unchanged bootstrap writes nothing.
func gzipBase64(s string) (string, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// extraConfigChanges are the option values to write so that the VM's ExtraConfig holds
// want (an absent key counts as "").
func extraConfigChanges(have []types.BaseOptionValue, want map[string]string) []types.BaseOptionValue {
	current := map[string]string{}
	for _, o := range have {
		v := o.GetOptionValue()
		if s, ok := v.Value.(string); ok {
			current[v.Key] = s
		}
	}
	var out []types.BaseOptionValue
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if current[k] != want[k] {
			out = append(out, &types.OptionValue{Key: k, Value: want[k]})
		}
	}
	return out
}
