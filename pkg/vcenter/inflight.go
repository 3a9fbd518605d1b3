package vcenter

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// AwaitTasks waits until no task of the entity (its recentTask list) is queued or
// running. A service calls it before it reads a VM to decide on a change: after a
// crash or a redelivery it then sees the result of the operation it (or another
// service) already started, instead of starting it a second time. A task that failed
// is finished; its failure is the business of whoever started it.
func AwaitTasks(ctx context.Context, c *vim25.Client, entity types.ManagedObjectReference) error {
	// One read follows recentTask to the tasks' states, rather than one read for the list
	// and another for its tasks: services call this on every reconcile.
	req := types.RetrievePropertiesEx{
		This: c.ServiceContent.PropertyCollector,
		SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: []types.ObjectSpec{{
				Obj:  entity,
				Skip: types.NewBool(true),
				SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{
					Type: entity.Type, Path: "recentTask", Skip: types.NewBool(false),
				}},
			}},
			PropSet: []types.PropertySpec{{Type: "Task", PathSet: []string{"info.state"}}},
		}},
	}
	content, err := mo.RetrievePropertiesEx(ctx, c, req)
	if err != nil {
		return fmt.Errorf("recent tasks of %s: %w", entity.Value, err)
	}
	var tasks []mo.Task
	if err := mo.LoadObjectContent(content, &tasks); err != nil {
		return fmt.Errorf("recent tasks of %s: %w", entity.Value, err)
	}
	for _, t := range tasks {
		if s := t.Info.State; s != types.TaskInfoStateQueued && s != types.TaskInfoStateRunning {
			continue
		}
		var failed task.Error
		if _, err := WaitTask(ctx, object.NewTask(c, t.Self)); err != nil && !errors.As(err, &failed) {
			return fmt.Errorf("await task %s of %s: %w", t.Self.Value, entity.Value, err)
		}
	}
	return nil
}
