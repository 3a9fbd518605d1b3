package storage

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/vcenter"
)

// othersCreatesWait bounds how long a lookup by name waits for the CNS creations this run
// did not issue.
const othersCreatesWait = time.Minute

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
// a lookup by name after it tells the truth: this run's own of name whose outcome it did
// not see, and every one vCenter still runs that this run did not issue. Those are a
// previous run's, or another replica's that died before it saw its outcome: the claim's
// lease is then free again, and the lookup must not miss what that replica's creation is
// about to make. CNS does not tell which volume a task creates, so all of them are waited
// for (live replicas' and other clients' too), for up to othersCreatesWait: a creation
// that runs longer fails the reconcile, to be retried, instead of holding its worker.
func (v *volumes) awaitCreatesOf(ctx context.Context, name string) error {
	running, err := v.othersCreates(ctx)
	if err != nil {
		return err
	}
	if len(running) > 0 {
		wctx, cancel := context.WithTimeout(ctx, cmp.Or(v.othersWait, othersCreatesWait))
		defer cancel()
		for _, ref := range running {
			// The task's outcome is not ours to judge, only that it has one: the volume
			// is looked up by name after.
			if _, err := object.NewTask(v.vc.Client, ref).WaitForResult(wctx); vcenter.Unanswered(err) {
				return fmt.Errorf("wait for CNS volume creation %s: %w", ref.Value, err)
			}
		}
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

// othersCreates are the unfinished CNS volume creations this run did not issue. Of
// vCenter's recent tasks (up to 200), only those not passed over before are asked about:
// a task that is finished, or no CNS creation, stays so.
func (v *volumes) othersCreates(ctx context.Context) ([]types.ManagedObjectReference, error) {
	pc := property.DefaultCollector(v.vc.Client)
	var tm mo.TaskManager
	if err := pc.RetrieveOne(ctx, *v.vc.ServiceContent.TaskManager, []string{"recentTask"}, &tm); err != nil {
		return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
	}
	v.mu.Lock()
	passed := v.passed
	v.mu.Unlock()
	own := map[string]bool{} // this run's creations whose outcome it has not seen
	v.unseen.Range(func(_, t any) bool {
		own[t.(*object.Task).Reference().Value] = true
		return true
	})
	var ask []types.ManagedObjectReference
	for _, ref := range tm.RecentTask {
		if !own[ref.Value] && !passed[ref.Value] {
			ask = append(ask, ref)
		}
	}
	var tasks []mo.Task
	if len(ask) > 0 {
		if err := pc.Retrieve(ctx, ask, []string{"info.descriptionId", "info.state"}, &tasks); err != nil {
			return nil, fmt.Errorf("read vCenter's recent tasks: %w", err)
		}
	}
	now := make(map[string]bool, len(tm.RecentTask)) // what is passed over of the recent tasks now
	for _, ref := range tm.RecentTask {
		if passed[ref.Value] {
			now[ref.Value] = true
		}
	}
	var out []types.ManagedObjectReference
	for _, t := range tasks {
		i := t.Info
		creates := strings.Contains(strings.ToLower(i.DescriptionId), "createvolume")
		unfinished := i.State == types.TaskInfoStateQueued || i.State == types.TaskInfoStateRunning
		if creates && unfinished {
			out = append(out, t.Reference())
		} else {
			now[t.Reference().Value] = true
		}
	}
	v.mu.Lock()
	v.passed = now
	v.mu.Unlock()
	return out, nil
}
