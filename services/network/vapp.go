package network

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/model"
)

// vAppValues are the vApp property values spec.bootstrap.vAppConfig asks for: its
// properties (inline or from a Secret key) or every key of its rawProperties Secret.
func vAppValues(va *model.VirtualMachineBootstrapVAppConfigSpec, sec *secrets) (map[string]string, error) {
	out := map[string]string{}
	if va.RawProperties != "" {
		data, err := sec.data(va.RawProperties)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			out[k] = string(v)
		}
		return out, nil
	}
	for _, p := range va.Properties {
		v, err := valueOrSecret(p.Value, sec)
		if err != nil {
			return nil, fmt.Errorf("vApp property %q: %w", p.Key, err)
		}
		out[p.Key] = v
	}
	return out, nil
}

// vAppChanges are the edits that give the VM's declared vApp properties the values; a
// key the VM's OVF environment (the image's) does not declare is an error naming it.
func vAppChanges(have types.BaseVmConfigInfo, values map[string]string) (*types.VmConfigSpec, error) {
	declared := map[string]types.VAppPropertyInfo{}
	if info, ok := have.(*types.VmConfigInfo); ok && info != nil {
		for _, p := range info.Property {
			declared[p.Id] = p
		}
	}
	var unknown []string
	spec := &types.VmConfigSpec{}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		p, ok := declared[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		if p.Value == values[k] {
			continue
		}
		p.Value = values[k]
		spec.Property = append(spec.Property, types.VAppPropertySpec{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &p,
		})
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("the image declares no vApp property %s", strings.Join(quoteAll(unknown), ", "))
	}
	if len(spec.Property) == 0 {
		return nil, nil
	}
	return spec, nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
