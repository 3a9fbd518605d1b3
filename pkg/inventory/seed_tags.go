package inventory

import (
	"context"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/vapi/tags"
)

// zoneTags tags each zone's cluster with the zone's tag in ZoneTagCategory.
func (s *seeder) zoneTags(ctx context.Context) error {
	m := tags.NewManager(s.rest)
	cat, err := ensureCategory(ctx, m, tags.Category{
		Name:            ZoneTagCategory,
		Description:     "Availability zone of a cluster (topology.kubernetes.io/zone)",
		Cardinality:     "SINGLE",
		AssociableTypes: []string{"ClusterComputeResource"},
	})
	if err != nil {
		return err
	}
	for _, z := range Zones {
		tagID, err := ensureTag(ctx, m, cat, z.Name)
		if err != nil {
			return err
		}
		cluster := s.clusters[z.Name]
		attached, err := m.ListAttachedTags(ctx, cluster)
		if err != nil {
			return fmt.Errorf("tags of cluster %s: %w", z.Cluster, err)
		}
		if slices.Contains(attached, tagID) {
			continue
		}
		if err := m.AttachTag(ctx, tagID, cluster); err != nil {
			return fmt.Errorf("attach zone tag %s to cluster %s: %w", z.Name, z.Cluster, err)
		}
	}
	return nil
}

// policyTags creates the tags the compute policies' TagPolicies stand for.
func (s *seeder) policyTags(ctx context.Context) error {
	m := tags.NewManager(s.rest)
	cat, err := ensureCategory(ctx, m, tags.Category{
		Name:            PolicyTagCategory,
		Description:     "Compute policies applied to a VM",
		Cardinality:     "MULTIPLE",
		AssociableTypes: []string{"VirtualMachine"},
	})
	if err != nil {
		return err
	}
	for _, name := range []string{ComputePolicyName, DefaultComputePolicy} {
		if _, err := ensureTag(ctx, m, cat, name); err != nil {
			return err
		}
	}
	return nil
}

// ensureCategory returns the ID of the category named like want, creating it from want if missing.
func ensureCategory(ctx context.Context, m *tags.Manager, want tags.Category) (string, error) {
	cats, err := m.GetCategories(ctx)
	if err != nil {
		return "", fmt.Errorf("list tag categories: %w", err)
	}
	for _, c := range cats {
		if c.Name == want.Name {
			return c.ID, nil
		}
	}
	id, err := m.CreateCategory(ctx, &want)
	if err != nil {
		return "", fmt.Errorf("create tag category %s: %w", want.Name, err)
	}
	return id, nil
}

// ensureTag returns the ID of the tag name in the category, creating it if missing.
func ensureTag(ctx context.Context, m *tags.Manager, categoryID, name string) (string, error) {
	ts, err := m.GetTagsForCategory(ctx, categoryID)
	if err != nil {
		return "", fmt.Errorf("list tags of category %s: %w", categoryID, err)
	}
	for _, t := range ts {
		if t.Name == name {
			return t.ID, nil
		}
	}
	id, err := m.CreateTag(ctx, &tags.Tag{Name: name, CategoryID: categoryID})
	if err != nil {
		return "", fmt.Errorf("create tag %s: %w", name, err)
	}
	return id, nil
}
