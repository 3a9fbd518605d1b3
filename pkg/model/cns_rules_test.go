package model

import "testing"

// Only the VM service creates a CnsRegisterVolume; what exists may be updated by the
// kind's privileged callers.
func TestValidateCnsRegisterVolume(t *testing.T) {
	if errs := ValidateCnsRegisterVolume(nil, false); len(errs) != 1 || errs[0].Field != "metadata" {
		t.Errorf("create by a user: %v, want one error on metadata", errs)
	}
	if errs := ValidateCnsRegisterVolume(nil, true); len(errs) != 0 {
		t.Errorf("create by the VM service: %v", errs)
	}
	if errs := ValidateCnsRegisterVolume(&CnsRegisterVolume{}, false); len(errs) != 0 {
		t.Errorf("update by a user: %v", errs)
	}
}

// The annotations the VM service stamps make the VM upgraded for that build only.
func TestUpgradedTo(t *testing.T) {
	vm := &VirtualMachine{}
	if Upgraded(vm, "b1") {
		t.Fatal("a VM without annotations is upgraded")
	}
	vm.Annotations = UpgradedTo("b1")
	if !Upgraded(vm, "b1") || Upgraded(vm, "b2") {
		t.Errorf("annotations %v: upgraded for b1 %v, for b2 %v; want only b1", vm.Annotations, Upgraded(vm, "b1"), Upgraded(vm, "b2"))
	}
}
