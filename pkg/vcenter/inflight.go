package vcenter

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
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
	pc := property.DefaultCollector(c)
	var e mo.ManagedEntity
	if err := pc.RetrieveOne(ctx, entity, []string{"recentTask"}, &e); err != nil {
		return fmt.Errorf("recent tasks of %s: %w", entity.Value, err)
	}
	if len(e.RecentTask) == 0 {
		return nil
	}
	var tasks []mo.Task
	if err := pc.Retrieve(ctx, e.RecentTask, []string{"info.state"}, &tasks); err != nil {
		return fmt.Errorf("states of the recent tasks of %s: %w", entity.Value, err)
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
