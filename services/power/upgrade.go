package power

import (
	"context"
	"fmt"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// syncHardwareVersion upgrades the VM's virtual hardware to spec.minHardwareVersion
// (UpgradeVM_Task) while it is powered off: a VM running when the minimum is raised is
// upgraded at its next power-off, or right before its next power-on. The VM's
// config.version is the record, so an upgrade made before a crash is not asked for again.
// hold says what vSphere refused: the VM is not powered on below its minimum.
func (r *reconciler) syncHardwareVersion(ctx context.Context, vm *model.VirtualMachine, obs observation) (_ observation, hold string, _ error) {
	want := vm.Spec.MinHardwareVersion
	if want == 0 || obs.hw.version == 0 || obs.hw.version >= want || obs.power != model.PowerStateOff {
		return obs, "", nil
	}
	version := fmt.Sprintf("vmx-%d", want)
	task, err := obs.vm.UpgradeVM(ctx, version)
	if err == nil {
		_, err = vcenter.WaitTask(ctx, task)
	}
	switch {
	case err != nil && vcenter.IsFault(err):
		r.log.Warn("hardware upgrade refused", "vm", obs.uniqueID(), "version", version, "err", err)
		return obs, fmt.Sprintf("the upgrade to hardware version %d, which vSphere refused: %v", want, err), nil
	case err != nil:
		return obs, "", fmt.Errorf("upgrade VM %s to %s: %w", obs.uniqueID(), version, err)
	}
	obs, err = r.observe(ctx, obs)
	return obs, "", err
}
