package vcenter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// ReadVM reads props of the VM that has instanceUUID into dst and returns the VM: the
// one moref names (the VM placement reported) while it still has that UUID, else the one
// a search finds; ErrNotFound when there is none. An empty instanceUUID trusts moref.
//
// The VM's unfinished tasks are awaited before the read counts, so that after a crash or
// a redelivery the caller sees the result of an operation already started (by itself or
// another service) instead of starting it a second time; a failed task is finished, its
// failure the business of whoever started it. The tasks' states come with the VM's
// properties in one property-collector call, so a VM at rest costs one round trip:
// services read their VM on every reconcile.
func ReadVM(ctx context.Context, c *govmomi.Client, moref, instanceUUID string, props []string, dst *mo.VirtualMachine) (*object.VirtualMachine, error) {
	if !slices.Contains(props, "config.instanceUuid") {
		props = append(slices.Clip(props), "config.instanceUuid")
	}
	if moref != "" {
		ref := types.ManagedObjectReference{Type: "VirtualMachine", Value: moref}
		found, err := readSettled(ctx, c.Client, ref, props, dst)
		if err != nil {
			return nil, err
		}
		if found && (instanceUUID == "" || dst.Config != nil && strings.EqualFold(dst.Config.InstanceUuid, instanceUUID)) {
			return object.NewVirtualMachine(c.Client, ref), nil
		}
	}
	if instanceUUID == "" {
		return nil, fmt.Errorf("%w: no VM %q", ErrNotFound, moref)
	}
	vm, err := FindVM(ctx, c, instanceUUID)
	if err != nil {
		return nil, err
	}
	found, err := readSettled(ctx, c.Client, vm.Reference(), props, dst)
	switch {
	case err != nil:
		return nil, err
	case !found: // destroyed since the search
		return nil, fmt.Errorf("%w: VM %s with instance UUID %s is gone", ErrNotFound, vm.Reference().Value, instanceUUID)
	}
	return vm, nil
}

// readSettled reads props of the VM ref into dst once none of its recent tasks is queued
// or running; found is false when ref is not a VM that exists.
func readSettled(ctx context.Context, c *vim25.Client, ref types.ManagedObjectReference, props []string, dst *mo.VirtualMachine) (found bool, err error) {
	req := types.RetrievePropertiesEx{
		This: c.ServiceContent.PropertyCollector,
		SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: []types.ObjectSpec{{
				Obj: ref,
				SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{
					Type: ref.Type, Path: "recentTask", Skip: types.NewBool(false),
				}},
			}},
			PropSet: []types.PropertySpec{
				{Type: ref.Type, PathSet: props},
				{Type: "Task", PathSet: []string{"info.state"}},
			},
		}},
	}
	for {
		content, err := mo.RetrievePropertiesEx(ctx, c, req)
		if fault.Is(err, &types.ManagedObjectNotFound{}) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read VM %s: %w", ref.Value, err)
		}
		var vm []types.ObjectContent
		var unfinished []types.ManagedObjectReference
		for _, oc := range content {
			switch oc.Obj.Type {
			case ref.Type:
				vm = append(vm, oc)
			case "Task":
				if taskUnfinished(oc) {
					unfinished = append(unfinished, oc.Obj)
				}
			}
		}
		if len(unfinished) == 0 {
			if len(vm) == 0 {
				return false, nil // ref names no VM (another kind of object)
			}
			*dst = mo.VirtualMachine{}
			if err := mo.LoadObjectContent(vm, dst); err != nil {
				return false, fmt.Errorf("read VM %s: %w", ref.Value, err)
			}
			return true, nil
		}
		for _, t := range unfinished {
			var failed task.Error
			if _, err := WaitTask(ctx, object.NewTask(c, t)); err != nil && !errors.As(err, &failed) {
				return false, fmt.Errorf("await task %s of VM %s: %w", t.Value, ref.Value, err)
			}
		}
	}
}

func taskUnfinished(oc types.ObjectContent) bool {
	for _, p := range oc.PropSet {
		if s, ok := p.Val.(types.TaskInfoState); ok && p.Name == "info.state" {
			return s == types.TaskInfoStateQueued || s == types.TaskInfoStateRunning
		}
	}
	return false
}
