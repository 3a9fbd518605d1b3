package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/vcenter"
)

// seedPoliciesVM is the seed's vSphere Policies example, verbatim.
const seedPoliciesVM = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
  namespace: my-namespace
spec:
  className: my-vm-class
  imageName: vmi-0a0044d7c690bcbea
  storageClass: my-storage-class
  policies:
  - apiVersion: vsphere.policy.vmware.com/v1alpha1
    kind: ComputePolicy
    name: my-compute-policy
`

// webPolicies are a Mandatory policy for VMs labelled tier=web, its TagPolicy (a tag vCenter
// does not have yet) and an Optional policy naming a TagPolicy that does not exist.
const webPolicies = `apiVersion: vsphere.policy.vmware.com/v1alpha1
kind: TagPolicy
metadata:
  name: web-tags
spec:
  tags:
  - %s
---
apiVersion: vsphere.policy.vmware.com/v1alpha1
kind: ComputePolicy
metadata:
  name: web-policy
spec:
  enforcementMode: Mandatory
  tags:
  - web-tags
  match:
    workload:
      labels:
      - key: tier
        operator: In
        values:
        - web
---
apiVersion: vsphere.policy.vmware.com/v1alpha1
kind: ComputePolicy
metadata:
  name: broken-policy
spec:
  enforcementMode: Optional
  tags:
  - no-such-tags
`

// TestPolicies walks issue #15's policy acceptance through kubectl: the seed's example gets
// my-compute-policy's tag (and the namespace's Mandatory default policy's) in vcsim's vAPI
// tag list, and status.policies lists both with their generations; a Mandatory policy
// matching a label applies to a VM that does not name it, the Optional one does not; a
// policy naming a missing TagPolicy is a condition, and the VM gets no tag at all.
func TestPolicies(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	e := tp.vcenter(t)
	rc, err := vcenter.LoginREST(t.Context(), vc, e.URL.User)
	if err != nil {
		t.Fatal(err)
	}
	m := tags.NewManager(rc)
	tagNames := func(vm string) []string {
		ids, err := m.ListAttachedTags(t.Context(), tp.vm(vc, vm).Reference())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, id := range ids {
			tag, err := m.GetTag(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tag.Name)
		}
		slices.Sort(names)
		return names
	}
	policies := func(vm string) string {
		return tp.kubectl("get", "vm", vm, "-n", "my-namespace", "-o",
			`jsonpath={range .status.policies[*]}{.kind}/{.name}@{.generation} {end}`)
	}

	tp.apply(seedPoliciesVM, "")
	tp.waitPower("my-vm", "PoweredOn")
	want := "ComputePolicy/my-compute-policy@1 ComputePolicy/namespace-default-policy@1 "
	tp.eventually("status.policies of my-vm", func() bool { return policies("my-vm") == want })
	if got := tagNames("my-vm"); !slices.Equal(got, []string{inventory.ComputePolicyName, inventory.DefaultComputePolicy}) {
		t.Errorf("tags of my-vm in vcsim %v, want %s and %s", got, inventory.ComputePolicyName, inventory.DefaultComputePolicy)
	}

	webTag := uuid.NewString()
	tp.apply(strings.Replace(webPolicies, "%s", webTag, 1), "")
	tp.apply(vmNamed("web-vm", "  labels:\n    tier: web\n"), "")
	tp.waitPower("web-vm", "PoweredOn")
	want = "ComputePolicy/namespace-default-policy@1 ComputePolicy/web-policy@1 "
	tp.eventually("status.policies of web-vm", func() bool { return policies("web-vm") == want })
	wantTags := []string{"urn:vmomi:InventoryServiceTag:" + webTag + ":GLOBAL", inventory.DefaultComputePolicy}
	slices.Sort(wantTags)
	if got := tagNames("web-vm"); !slices.Equal(got, wantTags) {
		t.Errorf("tags of web-vm in vcsim %v, want %v (not the Optional %s it does not name)", got, wantTags, inventory.ComputePolicyName)
	}
	if got := policies("my-vm"); got != "ComputePolicy/my-compute-policy@1 ComputePolicy/namespace-default-policy@1 " {
		t.Errorf("status.policies of my-vm (no tier label) %q: web-policy applied to it", got)
	}

	tp.apply(strings.NewReplacer("name: my-vm", "name: broken-vm", "name: my-compute-policy", "name: broken-policy").Replace(seedPoliciesVM), "")
	tp.waitCondition("broken-vm", "VirtualMachinePoliciesReady", "False NotFound ComputePolicy broken-policy names TagPolicy no-such-tags, which does not exist")
	if got := tagNames("broken-vm"); len(got) != 0 {
		t.Errorf("tags of broken-vm in vcsim %v, want none", got)
	}
	if got := policies("broken-vm"); got != "" {
		t.Errorf("status.policies of broken-vm %q, want none", got)
	}
}

// instanceStorageClass is my-vm-class with two instance storage volumes.
const instanceStorageClass = `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachineClass
metadata:
  name: instance-class
spec:
  hardware:
    cpus: 2
    memory: 4Gi
    instanceStorage:
      storageClass: my-storage-class
      volumes:
      - size: 20Gi
      - size: 10Gi
`

// TestInstanceStorage: a VM of a class with instance storage lands on a host with a local
// datastore, its instance volumes are claims bound to volumes on that datastore and attached
// to the VM, and a user cannot remove them (VOL-17).
func TestInstanceStorage(t *testing.T) {
	tp := startTopology(t)
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	tp.apply(instanceStorageClass, "")
	tp.apply(strings.Replace(vmNamed("instance-vm", ""), "my-vm-class", "instance-class", 1), "")
	tp.waitPower("instance-vm", "PoweredOn")
	get := func(path string) string {
		return tp.kubectl("get", "vm", "instance-vm", "-n", "my-namespace", "-o", "jsonpath="+path)
	}
	node := get("{.status.nodeName}")
	if !slices.Contains(inventory.InstanceStorageHosts, node) {
		t.Fatalf("instance-vm on host %q, want one with local storage %v", node, inventory.InstanceStorageHosts)
	}
	var claims []string // size:claim of the instance volumes
	instanceAt := -1    // index of an instance volume in spec.volumes
	for i, v := range strings.Fields(get(`{range .spec.volumes[*]}{.persistentVolumeClaim.instanceVolumeClaim.size}:{.persistentVolumeClaim.claimName} {end}`)) {
		if !strings.HasPrefix(v, ":") {
			claims, instanceAt = append(claims, v), i
		}
	}
	if len(claims) != 2 || !strings.HasPrefix(claims[0], "20Gi:instance-pvc-") || !strings.HasPrefix(claims[1], "10Gi:instance-pvc-") {
		t.Fatalf("instance volumes in spec.volumes %v, want 20Gi and 10Gi claims", claims)
	}
	vm := tp.vm(vc, "instance-vm")
	for _, c := range claims {
		name := c[strings.Index(c, ":")+1:]
		tp.eventually(name+" attached", func() bool {
			return get(`{.status.volumes[?(@.name=="`+name+`")].attached}`) == "true"
		})
		if out := tp.kubectl("get", "pvc", name, "-n", "my-namespace", "-o",
			`jsonpath={.status.phase} {.metadata.annotations.volume\.kubernetes\.io/selected-node} {.metadata.labels.vmoperator\.vmware\.com/instance-storage-resource}`); out != "Bound "+node+" true" {
			t.Errorf("claim %s: %q, want Bound on %s, labelled as instance storage", name, out, node)
		}
		volumeID := tp.kubectl("get", "pvc", name, "-n", "my-namespace", "-o", "jsonpath={.spec.volumeName}")
		disk := volumeDisk(t, vm, volumeID)
		if disk == nil {
			t.Fatalf("no disk of claim %s (volume %s) on the VM", name, volumeID)
		}
		file := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo).FileName
		if !strings.HasPrefix(file, "["+inventory.LocalDatastore(node)+"]") {
			t.Errorf("disk of claim %s in %s, want on %s", name, file, inventory.LocalDatastore(node))
		}
	}

	out, err := tp.kubectlErr("--context", "user", "patch", "vm", "instance-vm", "-n", "my-namespace", "--type=json",
		fmt.Sprintf(`-p=[{"op": "remove", "path": "/spec/volumes/%d"}]`, instanceAt))
	if err == nil || !strings.Contains(out, "instance storage volumes may only be added, changed or removed by privileged users") {
		t.Errorf("a user removing an instance volume: %v\n%s", err, out)
	}
}
