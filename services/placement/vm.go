package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmState is what placement reads of a VM in vCenter.
type vmState struct {
	ref          types.ManagedObjectReference
	biosUUID     string
	instanceUUID string
	created      *time.Time
	host, pool   *types.ManagedObjectReference
	powerState   types.VirtualMachinePowerState
	guestID      string // config.guestId: what compute policies match the guest by
	version      string // config.version, e.g. "vmx-19"
	uid          string // ExtraConfig vcenter.KeyUID; read only for a VM found by name
	adminPaused  bool   // ExtraConfig vcenter.KeyAdminPause: an admin paused it in vSphere
}

var vmProps = []string{"config.uuid", "config.instanceUuid", "config.createDate", "config.guestId", "config.version",
	"runtime.host", "runtime.powerState", "resourcePool", vcenter.AdminPauseProperty}

// errForeignVM: the VM's name is taken in its namespace folder by a VM of another object
// (an earlier incarnation still being destroyed, or someone else's VM).
var errForeignVM = errors.New("name taken by another VM")

// findVM looks for the object's VM: by the spec's instance UUID first (a VM made by an
// earlier reconcile; known is the moref this service last reported, tried before a
// search), then, with byName, by name in the namespace folder (a create that stopped
// before the UUID was set, or another VM holding the name). adopt reports a VM found by
// name that is not configured yet. Only a VM template item's deploy makes a VM without
// vmop's keys (every other create gives them in its own call), so only for such an image
// (unmarked says, asked only when such a VM is found) is a VM found by name without them
// taken for the object's; otherwise it is someone else's, never configured, nor destroyed.
//
// Callers search by name only for a create that was attempted and is no longer in
// flight (searchByName): a deploy in progress carries its UUID only once it ends, and is
// not to be adopted half done. It also spares vcsim, which cannot serve the search while
// VMs are being deployed into the folder: a VM that has no name yet makes its FindChild
// panic, and the panic leaves the SearchIndex locked for good (govmomi v0.56.0
// simulator/registry.go:450 and :693).
func (r *reconciler) findVM(ctx context.Context, t *topology, id vmIdentity, known, instanceUUID string, byName bool, unmarked func() (bool, error)) (v *vmState, adopt bool, err error) {
	if instanceUUID != "" {
		if v, err := r.read(ctx, known, instanceUUID, false); v != nil || err != nil {
			return v, false, err
		}
	}
	if !byName {
		return nil, false, nil
	}
	folder, err := r.namespaceFolder(ctx, t, id.namespace, false)
	if err != nil || folder == nil {
		return nil, false, err
	}
	var ref object.Reference
	err = traced(ctx, spanFindByName, func(ctx context.Context) error {
		var err error
		ref, err = object.NewSearchIndex(r.vc.c.Client).FindChild(ctx, folder, id.name)
		return err
	}, objectAttr(id.namespace, id.name))
	if err != nil || ref == nil || ref.Reference().Type != "VirtualMachine" {
		return nil, false, err
	}
	v, err = r.observe(ctx, ref.Reference(), true)
	if err != nil || v == nil {
		return nil, false, err
	}
	switch v.uid {
	case id.uid:
		return v, instanceUUID != "" && v.instanceUUID != instanceUUID, nil
	case "":
		ours, err := unmarked()
		if err != nil {
			return nil, false, err
		}
		if ours {
			return v, true, nil
		}
		return nil, false, fmt.Errorf("%w: VM %s in folder %s was not made by vmop", errForeignVM, id.name, id.namespace)
	default:
		return nil, false, fmt.Errorf("%w: VM %s in folder %s belongs to object uid %s", errForeignVM, id.name, id.namespace, v.uid)
	}
}

// observe reads the VM ref once its tasks are done; nil when it no longer exists.
func (r *reconciler) observe(ctx context.Context, ref types.ManagedObjectReference, withUID bool) (*vmState, error) {
	return r.read(ctx, ref.Value, "", withUID)
}

// read reads the VM with the instance UUID, by moref when it still has it (see
// vcenter.ReadVM); nil when there is none. withUID adds the ExtraConfig, for a VM whose
// owner is not known yet.
func (r *reconciler) read(ctx context.Context, moref, instanceUUID string, withUID bool) (*vmState, error) {
	props := vmProps
	if withUID { // the whole ExtraConfig, in place of its one key (two paths to one field)
		props = append(slices.DeleteFunc(slices.Clone(props), func(p string) bool { return strings.HasPrefix(p, "config.extraConfig[") }),
			"config.extraConfig")
	}
	var vm mo.VirtualMachine
	var found *object.VirtualMachine
	err := traced(ctx, spanObserve, func(ctx context.Context) error {
		var err error
		found, err = vcenter.ReadVM(ctx, r.vc.c, moref, instanceUUID, props, &vm)
		return err
	})
	if errors.Is(err, vcenter.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := &vmState{ref: found.Reference(), host: vm.Runtime.Host, pool: vm.ResourcePool, powerState: vm.Runtime.PowerState}
	if c := vm.Config; c != nil {
		v.biosUUID, v.instanceUUID, v.guestID, v.version = c.Uuid, c.InstanceUuid, c.GuestId, c.Version
		v.created = c.CreateDate
		for _, o := range c.ExtraConfig {
			if ov := o.GetOptionValue(); ov.Key == vcenter.KeyUID {
				v.uid, _ = ov.Value.(string)
			}
		}
		v.adminPaused = vcenter.AdminPaused(c.ExtraConfig)
	}
	return v, nil
}

// report fills the placement fields of status from the VM (api-rules §3 sources); the
// hardware version is power's, which upgrades it.
func (r *reconciler) report(ctx context.Context, t *topology, v *vmState, st *model.VirtualMachineStatus) error {
	st.UniqueID = v.ref.Value
	st.BiosUUID, st.InstanceUUID = v.biosUUID, v.instanceUUID
	if v.created != nil {
		at := metav1.NewTime(v.created.UTC().Truncate(time.Second))
		st.Provider = &model.VirtualMachineProviderStatus{CreationTimestamp: &at}
	}
	if v.host != nil {
		name, err := r.hostName(ctx, t, *v.host)
		if err != nil {
			return err
		}
		st.NodeName = name
	}
	if v.pool != nil {
		z, err := r.zoneOfPool(ctx, t, *v.pool)
		if err != nil {
			return err
		}
		st.Zone = z
	}
	return nil
}

func (r *reconciler) hostName(ctx context.Context, t *topology, ref types.ManagedObjectReference) (string, error) {
	if name, ok := t.hostName[ref]; ok {
		return name, nil
	}
	var h mo.HostSystem
	err := traced(ctx, spanObserve, func(ctx context.Context) error {
		return property.DefaultCollector(r.vc.c.Client).RetrieveOne(ctx, ref, []string{"name"}, &h)
	})
	if err != nil {
		return "", fmt.Errorf("name of host %s: %w", ref.Value, err)
	}
	return h.Name, nil
}

// zoneOfPool is the zone whose cluster holds pool: the cluster's root pool is known from the
// topology, a child pool is traced to its owner.
func (r *reconciler) zoneOfPool(ctx context.Context, t *topology, pool types.ManagedObjectReference) (string, error) {
	if z, ok := t.poolZone[pool]; ok {
		return z, nil
	}
	var rp mo.ResourcePool
	err := traced(ctx, spanObserve, func(ctx context.Context) error {
		return property.DefaultCollector(r.vc.c.Client).RetrieveOne(ctx, pool, []string{"owner"}, &rp)
	})
	if err != nil {
		return "", fmt.Errorf("owner of resource pool %s: %w", pool.Value, err)
	}
	for _, z := range t.zones {
		if z.cluster == rp.Owner {
			return z.name, nil
		}
	}
	return "", nil // outside every zone
}

// coreMHz is the clock of one core of v's host (0 for a VM on none): a VM found by name
// is configured as its create would have been, with a class's CPU in cores sized by it.
func (r *reconciler) coreMHz(ctx context.Context, v *vmState) (int64, error) {
	if v.host == nil {
		return 0, nil
	}
	var h mo.HostSystem
	err := traced(ctx, spanObserve, func(ctx context.Context) error {
		return object.NewHostSystem(r.vc.c.Client, *v.host).Properties(ctx, *v.host, []string{"summary.hardware"}, &h)
	})
	if err != nil {
		return 0, fmt.Errorf("host %s of VM %s: %w", v.host.Value, v.ref.Value, err)
	}
	if h.Summary.Hardware == nil {
		return 0, nil
	}
	return int64(h.Summary.Hardware.CpuMhz), nil
}
