package vcenter

import (
	"context"
	"fmt"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Task polls: the first look comes soon (most VM tasks take milliseconds to tens of
// milliseconds, and a service's worker waits on them), later ones back off by half each
// time to a ceiling that bounds how late a long task is noticed.
const (
	firstTaskPoll = 5 * time.Millisecond
	maxTaskPoll   = time.Second
)

// WaitTask waits for t to finish by reading its info, and returns the info; a failed task
// returns task.Error, as object.Task.Wait does, so fault.Is sees the task's fault.
//
// It polls instead of holding a WaitForUpdatesEx long poll as object.Task.Wait does: each
// pending long poll makes vCenter (and vcsim far more: it re-collects the poll's filter for
// every change anywhere in the inventory) work for every change until the task ends, so a
// service with many operations in flight would multiply that work; a poll costs one read.
func WaitTask(ctx context.Context, t *object.Task) (*types.TaskInfo, error) {
	pc := property.DefaultCollector(t.Client())
	delay := firstTaskPoll
	for {
		var mt mo.Task
		if err := pc.RetrieveOne(ctx, t.Reference(), []string{"info"}, &mt); err != nil {
			return nil, fmt.Errorf("read task %s: %w", t.Reference().Value, err)
		}
		switch mt.Info.State {
		case types.TaskInfoStateSuccess:
			observeTask(&mt.Info)
			return &mt.Info, nil
		case types.TaskInfoStateError:
			observeTask(&mt.Info)
			return &mt.Info, task.Error{LocalizedMethodFault: mt.Info.Error, Description: mt.Info.Description}
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		delay = min(delay*3/2, maxTaskPoll)
	}
}
