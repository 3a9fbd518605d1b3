package inventory

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
)

// computePolicy is a ComputePolicy and the TagPolicy of the same name carrying its vSphere tag.
type computePolicy struct {
	name, description, enforcementMode string
	matchWorkloadKind                  string // the policy applies to workloads of this kind; "" = no match clause
}

var computePolicies = []computePolicy{
	{name: ComputePolicyName, enforcementMode: "Optional",
		description: "Optional policy, applied to the VMs that list it in spec.policies"},
	{name: DefaultComputePolicy, enforcementMode: "Mandatory",
		description:       "Applied to every VM of the namespace",
		matchWorkloadKind: "VirtualMachine"},
}

// seededPolicies holds what the namespaced policy objects read from vCenter.
type seededPolicies struct {
	tagIDs map[string]string // policy tag name → tag ID
}

// readPolicies checks the KeyProviders are registered and reads the IDs of the policy tags.
func readPolicies(ctx context.Context, c *govmomi.Client, rc *rest.Client) (seededPolicies, error) {
	kmip, err := crypto.GetManagerKmip(c.Client)
	if err != nil {
		return seededPolicies{}, fmt.Errorf("crypto manager: %w", err)
	}
	for _, id := range KeyProviders {
		provider, err := findKeyProvider(ctx, kmip, id)
		if err != nil {
			return seededPolicies{}, err
		}
		if provider == nil {
			return seededPolicies{}, fmt.Errorf("key provider %s is not registered (is the inventory seeded?)", id)
		}
	}

	m := tags.NewManager(rc)
	cat, err := m.GetCategory(ctx, PolicyTagCategory)
	if err != nil {
		return seededPolicies{}, fmt.Errorf("tag category %s: %w", PolicyTagCategory, err)
	}
	ts, err := m.GetTagsForCategory(ctx, cat.ID)
	if err != nil {
		return seededPolicies{}, fmt.Errorf("tags of category %s: %w", PolicyTagCategory, err)
	}
	p := seededPolicies{tagIDs: make(map[string]string, len(ts))}
	for _, t := range ts {
		p.tagIDs[t.Name] = t.ID
	}
	for _, cp := range computePolicies {
		if p.tagIDs[cp.name] == "" {
			return seededPolicies{}, fmt.Errorf("tag %s of compute policy %s not found", cp.name, cp.name)
		}
	}
	return p, nil
}

// objects are the namespace's EncryptionClass, TagPolicies and ComputePolicies.
func (p seededPolicies) objects(namespace string) []map[string]any {
	enc := newObject(encryptionV1a1, "EncryptionClass", namespace, EncryptionClassName, nil)
	enc["spec"] = map[string]any{"keyProvider": KeyProvider} // no keyID: a key is generated per VM
	out := []map[string]any{enc}

	for _, cp := range computePolicies {
		tp := newObject(policyV1a1, "TagPolicy", namespace, cp.name, nil)
		tp["spec"] = map[string]any{"tags": []any{p.tagIDs[cp.name]}}

		spec := map[string]any{
			"description":     cp.description,
			"policyID":        policyID(cp.name),
			"enforcementMode": cp.enforcementMode,
			"tags":            []any{cp.name},
		}
		if cp.matchWorkloadKind != "" {
			spec["match"] = map[string]any{"workload": map[string]any{"kind": cp.matchWorkloadKind}}
		}
		pol := newObject(policyV1a1, "ComputePolicy", namespace, cp.name, nil)
		pol["spec"] = spec
		out = append(out, tp, pol)
	}
	return out
}

// policyID is a stable ID for a compute policy: vCenter's compute policy service is not simulated,
// so the policy's vSphere side is its tag.
func policyID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("urn:vmop:compute-policy:"+name)).String()
}
