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

// creating records a creation of the volume name this run issued; seen is told the error
// of waiting for it. An unanswered wait (vcenter.Unanswered: it failed on the way while
// vCenter went on) leaves the creation for awaitCreatesOf, or a retry would not find the
// volume by name yet and make a second one; any other outcome is seen.
func (v *volumes) creating(name string, task *object.Task) (seen func(error)) {
	v.issued.Store(task.Reference().Value, true)
	v.unseen.Store(name, task)
	return func(err error) {
		if !vcenter.Unanswered(err) {
			v.unseen.CompareAndDelete(name, task)
			v.issued.Delete(task.Reference().Value)
		}
	}
}

// awaitCreatesOf waits for the creations that may still make a volume named name, so that
// a lookup by name after it tells the truth: this run's own of name whose outcome it did
// not see, and every one vCenter still runs that this run did not issue. Those are a
// previous run's, or another replica's that died before it saw its outcome: the claim's
// lease is then free again, and the lookup must not miss what that replica's creation is
// about to make. CNS does not tell which volume a task creates, so all of them are waited
// for.
func (v *volumes) awaitCreatesOf(ctx context.Context, name string) error {
	running, err := v.othersCreates(ctx)
	if err != nil {
		return err
	}
	for _, ref := range running {
		// The task's outcome is not ours to judge: the volume is looked up by name after.
		if _, err := object.NewTask(v.vc.Client, ref).WaitForResult(ctx); ctx.Err() != nil {
			return fmt.Errorf("wait for CNS volume creation %s: %w", ref.Value, err)
		}
	}
	t, ok := v.unseen.Load(name)
	if !ok {
		return nil
	}
	task := t.(*object.Task)
	if _, err := task.WaitForResult(ctx); vcenter.Unanswered(err) {
		return fmt.Errorf("wait for the creation of CNS volume %s: %w", name, err)
	}
	v.unseen.CompareAndDelete(name, t)
	v.issued.Delete(task.Reference().Value)
	return nil
}

// othersCreates are the unfinished CNS volume creations this run did not issue.
func (v *volumes) othersCreates(ctx context.Context) ([]types.ManagedObjectReference, error) {
	pc := property.DefaultCollector(v.vc.Client)
	var tm mo.TaskManager
	if err := pc.RetrieveOne(ctx, *v.vc.ServiceContent.TaskManager, []string{"recentTask"}, &tm); err != nil {
		return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
	}
	if len(tm.RecentTask) == 0 {
		return nil, nil
	}
	var tasks []mo.Task
	if err := pc.Retrieve(ctx, tm.RecentTask, []string{"info.descriptionId", "info.state"}, &tasks); err != nil {
		return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
	}
	var out []types.ManagedObjectReference
	for _, t := range tasks {
		i := t.Info
		creates := strings.Contains(strings.ToLower(i.DescriptionId), "createvolume")
		unfinished := i.State == types.TaskInfoStateQueued || i.State == types.TaskInfoStateRunning
		if _, own := v.issued.Load(t.Reference().Value); creates && unfinished && !own {
			out = append(out, t.Reference())
		}
	}
	return out, nil
}
