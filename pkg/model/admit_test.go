package model

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// admitVM runs a VM through the gateway's stages in order: schema (422), schema defaults,
// defaulting (403), validation (422), else 200; vm becomes the admitted (defaulted) object.
func admitVM(t *testing.T, vm, old *VirtualMachine, env VMEnv) (int, field.ErrorList) {
	t.Helper()
	raw, err := json.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	if _, errs := CheckSchema("VirtualMachine", obj); len(errs) > 0 {
		return 422, errs
	}
	ApplyDefaults("VirtualMachine", obj)
	if raw, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	*vm = VirtualMachine{}
	if err := json.Unmarshal(raw, vm); err != nil {
		t.Fatal(err)
	}
	if ferr := DefaultVirtualMachine(vm, old, env); ferr != nil {
		return 403, field.ErrorList{ferr}
	}
	if errs := ValidateVirtualMachine(vm, old, env); len(errs) > 0 {
		return 422, errs
	}
	return 200, nil
}
