package placement

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
)

// tagCache remembers what placement learnt of vCenter's tag service: the ID of the policy
// tag category and the tags known to exist (tags are rarely deleted; a deleted one fails
// the attach, which forgets the cache and is retried).
type tagCache struct {
	mu       sync.Mutex
	category string
	exists   map[string]bool
}

// syncTags makes the VM's policy tags what the plan says, exactly once across crashes: it
// reads the tags attached to the VM and attaches and detaches only the difference. It
// detaches only tags it could have attached: those of the namespace's TagPolicies and those
// of the policy category; tags others attach stay.
func (r *reconciler) syncTags(ctx context.Context, vm types.ManagedObjectReference, plan policyPlan) error {
	m := tags.NewManager(r.vc.rest)
	attached, err := m.ListAttachedTags(ctx, vm)
	if err != nil {
		return fmt.Errorf("tags of VM %s: %w", vm.Value, err)
	}
	var attach, detach, unknown []string
	for _, id := range plan.tags {
		if !slices.Contains(attached, id) {
			attach = append(attach, id)
		}
	}
	for _, id := range attached {
		switch {
		case slices.Contains(plan.tags, id):
		case plan.known[id]:
			detach = append(detach, id)
		default:
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		ours, err := r.categoryTags(ctx, m)
		if err != nil {
			return err
		}
		for _, id := range unknown {
			if slices.Contains(ours, id) {
				detach = append(detach, id)
			}
		}
	}
	if len(attach) > 0 {
		if err := r.ensureTags(ctx, m, attach); err != nil {
			return err
		}
		if err := m.AttachMultipleTagsToObject(ctx, attach, vm); err != nil {
			r.tags.forget()
			return fmt.Errorf("attach tags %v to VM %s: %w", attach, vm.Value, err)
		}
	}
	if len(detach) > 0 {
		if err := m.DetachMultipleTagsFromObject(ctx, detach, vm); err != nil {
			return fmt.Errorf("detach tags %v from VM %s: %w", detach, vm.Value, err)
		}
	}
	return nil
}

// ensureTags creates those of the tags (IDs) that vCenter's tag service lacks, under their
// own ID, in the policy category, named by their ID (unique in the category by construction;
// a create a crash interrupted is found by that name).
func (r *reconciler) ensureTags(ctx context.Context, m *tags.Manager, ids []string) error {
	r.tags.mu.Lock()
	defer r.tags.mu.Unlock()
	var missing []string
	for _, id := range ids {
		if !r.tags.exists[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	all, err := m.ListTags(ctx)
	if err != nil {
		return fmt.Errorf("list tags: %w", err)
	}
	r.tags.exists = map[string]bool{}
	for _, id := range all {
		r.tags.exists[id] = true
	}
	for _, id := range missing {
		if r.tags.exists[id] {
			continue
		}
		cat, err := r.policyCategoryLocked(ctx, m)
		if err != nil {
			return err
		}
		if _, err := m.CreateTag(ctx, &tags.Tag{TagID: id, Name: id, CategoryID: cat,
			Description: "created by vmop for a TagPolicy that names it"}); err != nil {
			return fmt.Errorf("create tag %s: %w", id, err)
		}
		r.tags.exists[id] = true
	}
	return nil
}

// categoryTags lists the tags of the policy category.
func (r *reconciler) categoryTags(ctx context.Context, m *tags.Manager) ([]string, error) {
	r.tags.mu.Lock()
	cat, err := r.policyCategoryLocked(ctx, m)
	r.tags.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ids, err := m.ListTagsForCategory(ctx, cat)
	if err != nil {
		return nil, fmt.Errorf("tags of category %s: %w", inventory.PolicyTagCategory, err)
	}
	return ids, nil
}

// policyCategoryLocked is the ID of the policy tag category, created if missing; r.tags.mu
// is held.
func (r *reconciler) policyCategoryLocked(ctx context.Context, m *tags.Manager) (string, error) {
	if r.tags.category != "" {
		return r.tags.category, nil
	}
	cats, err := m.GetCategories(ctx)
	if err != nil {
		return "", fmt.Errorf("list tag categories: %w", err)
	}
	for _, c := range cats {
		if c.Name == inventory.PolicyTagCategory {
			r.tags.category = c.ID
			return c.ID, nil
		}
	}
	id, err := m.CreateCategory(ctx, &tags.Category{Name: inventory.PolicyTagCategory,
		Description: "Compute policies applied to a VM", Cardinality: "MULTIPLE",
		AssociableTypes: []string{"VirtualMachine"}})
	if err != nil {
		return "", fmt.Errorf("create tag category %s: %w", inventory.PolicyTagCategory, err)
	}
	r.tags.category = id
	return id, nil
}

// forget drops what the cache knows of existing tags.
func (c *tagCache) forget() {
	c.mu.Lock()
	c.exists = nil
	c.mu.Unlock()
}
