package placement

// Instance storage lives on a datastore local to the VM's host, so a VM whose class has
// instance storage goes to a host with a local datastore that can hold all its instance
// volumes. Placement records the host on the VM and adds the volumes to spec.volumes before
// the create, so a restarted placement creates the VM on that same host, and the storage
// service provisions the volumes' claims on that host's local datastore.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// instanceNeed is a VM's instance storage: the bytes its volumes need together, and the host
// an earlier reconcile chose for them ("" before). While a host is chosen, committed is the
// instance storage recorded on each host for the other VMs (instanceCommitments).
type instanceNeed struct {
	bytes     int64
	host      string           // moref value
	committed map[string]int64 // by host moref value
}

func instanceNeedOf(cls *class, vm *model.VirtualMachine) instanceNeed {
	if cls == nil {
		return instanceNeed{}
	}
	return instanceNeed{bytes: model.InstanceStorageNeed(cls.instance),
		host: vm.Annotations[model.AnnotationInstanceStorageSelectedNodeMOID]}
}

// instanceCommitment is the instance storage recorded for a VM on a host.
type instanceCommitment struct {
	host  string // moref value; "" when none is recorded
	bytes int64
}

// committedBy is the instance storage a VM's record commits: its instance volumes' sizes
// on the host its annotation records.
func committedBy(annotations map[string]string, volumes []model.VirtualMachineVolume) instanceCommitment {
	c := instanceCommitment{host: annotations[model.AnnotationInstanceStorageSelectedNodeMOID]}
	if c.host == "" {
		return c
	}
	for _, v := range volumes {
		if pvc := v.PersistentVolumeClaim; pvc != nil && pvc.InstanceVolumeClaim != nil {
			c.bytes += pvc.InstanceVolumeClaim.Size.Value()
		}
	}
	return c
}

// instanceCommitments is, by host moref value, the instance storage recorded on each host
// for the VMs of every namespace but uid: the instance volumes each record holds in
// spec.volumes for the host its annotation names (recordInstanceStorage), provisioned or
// not yet. A host's local datastore is shared by every namespace, and vCenter counts a
// volume in its free space only once the storage service has made it (vcsim not even
// then), so the free space alone would let two VMs take the same room.
func (r *reconciler) instanceCommitments(ctx context.Context, uid string) (map[string]int64, error) {
	vms, err := r.vms.Everywhere(ctx)
	if err != nil {
		return nil, err
	}
	committed := map[string]int64{}
	for _, vm := range vms {
		if c := vm.Value.instance; c.host != "" && vm.Value.uid != uid {
			committed[c.host] += c.bytes
		}
	}
	return committed, nil
}

// available is the room a host's local datastore has left for instance storage: its free
// space, and no more than its capacity less the instance storage committed there.
func available(ds vcenter.LocalDatastore, committed int64) int64 {
	return min(ds.Free, ds.Capacity-committed)
}

// unrecorded reports that the VM needs instance storage and no host is recorded for it yet.
func (n instanceNeed) unrecorded() bool { return n.bytes > 0 && n.host == "" }

// withInstanceStorage narrows hosts to those with a local datastore of at least need.bytes
// free, or to the host recorded for the VM; errNoCapacity when none remains. Placement's
// candidate narrowing calls it before choosing among the hosts.
func (r *reconciler) withInstanceStorage(ctx context.Context, hosts []hostCapacity, need instanceNeed) ([]hostCapacity, error) {
	if need.bytes <= 0 {
		return hosts, nil
	}
	refs := make([]types.ManagedObjectReference, 0, len(hosts))
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		refs = append(refs, h.ref)
		names = append(names, h.name)
	}
	local, err := vcenter.LocalDatastores(ctx, r.vc.c.Client, refs)
	if err != nil {
		return nil, err
	}
	var out []hostCapacity
	for _, h := range hosts {
		if need.host != "" && h.ref.Value != need.host {
			continue
		}
		if dss := local[h.ref]; len(dss) > 0 && available(dss[0], need.committed[h.ref.Value]) >= need.bytes {
			out = append(out, h)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	size := resource.NewQuantity(need.bytes, resource.BinarySI).String()
	if need.host != "" {
		return nil, fmt.Errorf("%w: host %s recorded for the VM's instance storage is not among hosts %s with a local datastore of %s free",
			errNoCapacity, need.host, strings.Join(names, ", "), size)
	}
	return nil, fmt.Errorf("%w: none of the hosts %s has a local datastore with %s free for the class's instance storage%s",
		errNoCapacity, strings.Join(names, ", "), size, besideCommitted(hosts, need.committed))
}

// besideCommitted says, for a refusal, how much instance storage is recorded on the hosts
// for other VMs.
func besideCommitted(hosts []hostCapacity, committed map[string]int64) string {
	var total int64
	for _, h := range hosts {
		total += committed[h.ref.Value]
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf(" beside the %s recorded for other VMs", resource.NewQuantity(total, resource.BinarySI))
}

// recordInstanceStorage appends the VM's record with the chosen host in the
// instance-storage annotations, the class's instance volumes added to spec.volumes
// (generation counted, as the gateway counts a spec change) and, when zone is not "", the
// zone label: one compare-and-swap on the record reconciled, so a concurrent change makes it
// fail with a conflict and the retry starts from the newer record.
func (r *reconciler) recordInstanceStorage(ctx context.Context, o reconcile.Object, vm *model.VirtualMachine, cls *class, host hostCapacity, zone string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(o.Spec.Body, &obj); err != nil {
		return fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	meta := vm.ObjectMeta
	meta.Generation++
	meta.Annotations = with(meta.Annotations, map[string]string{
		model.AnnotationInstanceStorageSelectedNodeMOID: host.ref.Value,
		model.AnnotationInstanceStorageSelectedNode:     host.name,
	})
	if zone != "" {
		meta.Labels = with(meta.Labels, map[string]string{model.LabelZone: zone})
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(obj["spec"], &spec); err != nil {
		return fmt.Errorf("%w: decode spec of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	volumes := vm.Spec.Volumes
	for _, v := range model.InstanceVolumes(cls.instance, string(vm.UID)) {
		if !hasVolume(volumes, v.Name) {
			volumes = append(volumes, v)
		}
	}
	var err error
	if spec["volumes"], err = json.Marshal(volumes); err != nil {
		return fmt.Errorf("%w: encode volumes of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if obj["spec"], err = json.Marshal(spec); err != nil {
		return fmt.Errorf("%w: encode spec of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if obj["metadata"], err = json.Marshal(meta); err != nil {
		return fmt.Errorf("%w: encode metadata of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	if _, err := events.AppendSpec(ctx, r.js, o.Ref, events.OpPut, body, o.Spec.Seq, nil); err != nil {
		return fmt.Errorf("record instance storage of %s: %w", o.Ref, err)
	}
	return nil
}

// with is a copy of m with the entries of add.
func with(m, add map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, add)
	return out
}

func hasVolume(vs []model.VirtualMachineVolume, name string) bool {
	return slices.ContainsFunc(vs, func(v model.VirtualMachineVolume) bool { return v.Name == name })
}
