package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// The seed's affinity examples, verbatim but for the fields admission requires of every
// VM (the seed leaves them out of these examples) and, for the database VMs, a zone.
const (
	seedZoneAffinity = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm-1
  namespace: my-namespace-1
  labels:
    app: my-app-1
spec:
  groupName: my-vm-group  # Required for affinity rules
  affinity:
    vmAffinity:
      requiredDuringSchedulingPreferredDuringExecution:
      - labelSelector:
          matchLabels:
            app: my-app-1
        # The topology key is what designates the scope of the rule.
        # For example, "topologyKey: kubernetes.io/hostname" would
        # indicate the rule applies to nodes and not zones.
        # For more detail, please refer to
        # https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/.
        topologyKey: topology.kubernetes.io/zone
`
	seedHostAntiAffinity = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: database-vm-1
  namespace: my-namespace-1
  labels:
    tier: database
spec:
  groupName: database-group  # Required for affinity rules
  affinity:
    vmAntiAffinity:
      requiredDuringSchedulingPreferredDuringExecution:
      - labelSelector:
          matchLabels:
            tier: database
        topologyKey: kubernetes.io/hostname
`
	requiredFields = "spec:\n  className: my-vm-class\n  imageName: vmi-0a0044d7c690bcbea\n  storageClass: my-storage-class\n"
)

// seedVM is a seed example renamed from its first VM's name to name, with the required
// fields and more labels (indented by four).
func seedVM(doc, first, name, labels string) string {
	doc = strings.Replace(doc, "name: "+first, "name: "+name, 1)
	doc = strings.Replace(doc, "  labels:\n", "  labels:\n"+labels, 1)
	return strings.Replace(doc, "spec:\n", requiredFields, 1)
}

// placementReady is the jsonpath of a field of the VM's PlacementReady condition.
func placementReady(field string) string {
	return `{.status.conditions[?(@.type=="VirtualMachineConditionPlacementReady")].` + field + `}`
}

// TestAffinityPlacement is issue #15's affinity and group acceptance through the REST API,
// every service its own role: zone affinity lands in one zone; host anti-affinity lands
// on different hosts, and a VM no host can take is not created and says why; vcsim holds
// the cluster rule, gone after the VMs are deleted; a group of four with a zone is placed
// together, and kubectl get vmg shows where; bad input is refused or explained.
func TestAffinityPlacement(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	apply := func(t *testing.T, doc string) {
		t.Helper()
		if out, err := tp.kubectlCtx(t.Context(), []byte(doc), "apply", "-n", "my-namespace", "-f", "-"); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
	}
	applyIn1 := func(t *testing.T, doc string) {
		t.Helper()
		if out, err := tp.kubectlCtx(t.Context(), []byte(doc), "apply", "-n", "my-namespace-1", "-f", "-"); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
	}
	get := func(ns, name, path string) string {
		out, _ := tp.kubectlErr("get", "vm", name, "-n", ns, "-o", "jsonpath="+path)
		return out
	}

	{ // zone affinity lands in one zone
		var docs []string
		for i := 1; i <= 3; i++ {
			docs = append(docs, seedVM(seedZoneAffinity, "my-vm-1", fmt.Sprintf("my-vm-%d", i), ""))
		}
		applyIn1(t, strings.Join(docs, "---\n"))
		zones := map[string]bool{}
		for i := 1; i <= 3; i++ {
			name := fmt.Sprintf("my-vm-%d", i)
			tp.eventually(name+" placed", func() bool { return get("my-namespace-1", name, "{.status.uniqueID}") != "" })
			zones[get("my-namespace-1", name, "{.status.zone}")] = true
		}
		if len(zones) != 1 || zones[""] {
			t.Errorf("zones %v, want one", zones)
		}
	}

	{ // host anti-affinity
		zoneLabel := "    topology.kubernetes.io/zone: zone-a\n"
		var docs []string
		for i := 1; i <= 3; i++ {
			docs = append(docs, seedVM(seedHostAntiAffinity, "database-vm-1", fmt.Sprintf("database-vm-%d", i), zoneLabel))
		}
		applyIn1(t, docs[0]+"---\n"+docs[1])
		var hosts, refs []string
		for _, name := range []string{"database-vm-1", "database-vm-2"} {
			tp.eventually(name+" placed", func() bool { return get("my-namespace-1", name, "{.status.uniqueID}") != "" })
			hosts = append(hosts, get("my-namespace-1", name, "{.status.nodeName}"))
			refs = append(refs, get("my-namespace-1", name, "{.status.uniqueID}"))
		}
		if hosts[0] == hosts[1] {
			t.Errorf("both database VMs on %s", hosts[0])
		}

		applyIn1(t, docs[2])
		tp.eventually("database-vm-3 refused", func() bool {
			return get("my-namespace-1", "database-vm-3", placementReady("reason")) == "AffinityUnsatisfiable"
		})
		if msg := get("my-namespace-1", "database-vm-3", placementReady("message")); !strings.Contains(msg, "vmAntiAffinity") {
			t.Errorf("PlacementReady message %q does not name the rule", msg)
		}
		if id := get("my-namespace-1", "database-vm-3", "{.status.uniqueID}"); id != "" {
			t.Errorf("database-vm-3 was created as %s", id)
		}

		rule := antiAffinityRule(t, vc, "cluster-a", refs[0])
		if rule == nil || !sameMembers(rule.Vm, refs) {
			t.Fatalf("cluster-a's rule naming %s: %+v, want one naming %v", refs[0], rule, refs)
		}
		tp.kubectl("delete", "vm", "-n", "my-namespace-1", "database-vm-3", "database-vm-1", "database-vm-2")
		if r := antiAffinityRule(t, vc, "cluster-a", refs[1]); r != nil {
			t.Errorf("rule %s still in cluster-a after its VMs were deleted", r.Name)
		}
	}

	{ // group with a zone placed together
		doc := "apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachineGroup\nmetadata:\n  name: web-tier\n  labels:\n    topology.kubernetes.io/zone: zone-b\n"
		for i := 1; i <= 4; i++ {
			doc += "---\n" + strings.Replace(vmNamed(fmt.Sprintf("web-%d", i), ""), "spec:\n", "spec:\n  groupName: web-tier\n", 1)
		}
		apply(t, doc)
		var out string
		tp.eventually("kubectl get vmg shows the placement", func() bool {
			out, _ = tp.kubectlErr("get", "vmg", "web-tier", "-n", "my-namespace")
			return strings.Count(out, "in zone-b on esx-b") == 4
		})
		t.Logf("kubectl get vmg:\n%s", out)
		for i := 1; i <= 4; i++ {
			if z := get("my-namespace", fmt.Sprintf("web-%d", i), "{.status.zone}"); z != "zone-b" {
				t.Errorf("web-%d in zone %q, want zone-b", i, z)
			}
		}
		placements := tp.kubectl("get", "vmg", "web-tier", "-n", "my-namespace", "-o",
			`jsonpath={range .status.members[*]}{.name}={.placement.zoneID}/{.conditions[?(@.type=="PlacementReady")].status} {end}`)
		if strings.Count(placements, "=zone-b/True") != 4 {
			t.Errorf("group members' placement: %q, want four in zone-b, PlacementReady True", placements)
		}
	}

	{ // bad input
		out, err := tp.kubectlCtx(t.Context(), []byte(vmNamed("nowhere-vm", "  labels:\n    topology.kubernetes.io/zone: zone-x\n")),
			"apply", "-n", "my-namespace", "-f", "-")
		if err == nil || !strings.Contains(out, "metadata.labels[topology.kubernetes.io/zone]") {
			t.Errorf("a VM in zone-x: %v\n%s\nwant a field error on the zone label", err, out)
		}
		lonely := seedVM(seedZoneAffinity, "my-vm-1", "lonely-vm", "")
		lonely = strings.Replace(lonely, "            app: my-app-1\n", "            app: nobody\n", 1)
		applyIn1(t, lonely)
		tp.eventually("lonely-vm explained", func() bool {
			return get("my-namespace-1", "lonely-vm", placementReady("reason")) == "AffinityInvalid"
		})
		if z, id := get("my-namespace-1", "lonely-vm", "{.status.zone}"), get("my-namespace-1", "lonely-vm", "{.status.uniqueID}"); z != "" || id != "" {
			t.Errorf("lonely-vm: zone %q, uniqueID %q; want nothing chosen or created", z, id)
		}
	}
}

// antiAffinityRule is the vmop anti-affinity rule of the cluster naming the VM, nil if none.
func antiAffinityRule(t *testing.T, vc *govmomi.Client, cluster, vm string) *types.ClusterAntiAffinityRuleSpec {
	t.Helper()
	cc, err := find.NewFinder(vc.Client).ClusterComputeResource(t.Context(), "/"+inventory.Datacenter+"/host/"+cluster)
	if err != nil {
		t.Fatal(err)
	}
	var m mo.ClusterComputeResource
	if err := cc.Properties(t.Context(), cc.Reference(), []string{"configurationEx"}, &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.ConfigurationEx.(*types.ClusterConfigInfoEx).Rule {
		if a, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && strings.HasPrefix(a.Name, "vmop-") &&
			slices.ContainsFunc(a.Vm, func(ref types.ManagedObjectReference) bool { return ref.Value == vm }) {
			return a
		}
	}
	return nil
}

func sameMembers(refs []types.ManagedObjectReference, want []string) bool {
	var got []string
	for _, r := range refs {
		got = append(got, r.Value)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	return slices.Equal(got, want)
}
