package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// awaitEarlierCreates waits for the CNS volume creations vCenter still runs that were
// queued before this run of the service began: ones a previous run started before it
// stopped, whose volumes cannot be found by name until they finish. Once none is left,
// none can appear, and later calls return at once.
func (v *volumes) awaitEarlierCreates(ctx context.Context) error {
	if v.settled.Load() {
		return nil
	}
	running, err := v.earlierCreates(ctx)
	if err != nil {
		return err
	}
	for _, ref := range running {
		// The task's outcome is not ours to judge: the volume is looked up by name after.
		if _, err := object.NewTask(v.vc.Client, ref).WaitForResult(ctx); ctx.Err() != nil {
			return fmt.Errorf("wait for CNS volume creation %s: %w", ref.Value, err)
		}
	}
	v.settled.Store(true)
	return nil
}

// creating records a creation of the volume name this run issued; seen is told the error
// of waiting for it. An unanswered wait (vcenter.Unanswered: it failed on the way while
// vCenter went on) leaves the creation for awaitCreatesOf, or a retry would not find the
// volume by name yet and make a second one; any other outcome is seen.
func (v *volumes) creating(name string, task *object.Task) (seen func(error)) {
	v.unseen.Store(name, task)
	return func(err error) {
		if !vcenter.Unanswered(err) {
			v.unseen.CompareAndDelete(name, task)
		}
	}
}

// awaitCreatesOf waits for the creations that may still make a volume named name, so that
// a lookup by name after it tells the truth: those queued before this run began
// (awaitEarlierCreates), and this run's own of name whose outcome it did not see.
func (v *volumes) awaitCreatesOf(ctx context.Context, name string) error {
	if err := v.awaitEarlierCreates(ctx); err != nil {
		return err
	}
	t, ok := v.unseen.Load(name)
	if !ok {
		return nil
	}
	if _, err := t.(*object.Task).WaitForResult(ctx); vcenter.Unanswered(err) {
		return fmt.Errorf("wait for the creation of CNS volume %s: %w", name, err)
	}
	v.unseen.CompareAndDelete(name, t)
	return nil
}

// earlierCreates are the unfinished CNS volume creations queued before this run began.
func (v *volumes) earlierCreates(ctx context.Context) ([]types.ManagedObjectReference, error) {
	pc := property.DefaultCollector(v.vc.Client)
	var tm mo.TaskManager
	if err := pc.RetrieveOne(ctx, *v.vc.ServiceContent.TaskManager, []string{"recentTask"}, &tm); err != nil {
		return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
	}
	if len(tm.RecentTask) == 0 {
		return nil, nil
	}
	var tasks []mo.Task
	if err := pc.Retrieve(ctx, tm.RecentTask, []string{"info"}, &tasks); err != nil {
		return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
	}
	var out []types.ManagedObjectReference
	for _, t := range tasks {
		i := t.Info
		creates := strings.Contains(strings.ToLower(i.DescriptionId), "createvolume")
		unfinished := i.State == types.TaskInfoStateQueued || i.State == types.TaskInfoStateRunning
		if creates && unfinished && i.QueueTime.Before(v.started) {
			out = append(out, t.Reference())
		}
	}
	return out, nil
}
