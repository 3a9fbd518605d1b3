package power

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/vcenter"
)

// vmIndex maps VM morefs to the VirtualMachine objects they belong to, so that the watch
// can turn a vCenter event into a reconcile. Reconciles teach it the VMs they find; a VM
// it does not know is looked up once by its ExtraConfig (vcenter.KeyObject), and VMs
// that are not vmop's are remembered as such.
type vmIndex struct {
	mu    sync.Mutex
	refs  map[string]events.Ref // by moref; the zero Ref: not a vmop VM
	known map[events.Ref]string // moref by object, to forget an object's VM
}

func newVMIndex() *vmIndex {
	return &vmIndex{refs: map[string]events.Ref{}, known: map[events.Ref]string{}}
}

// remember records that moref is ref's VM.
func (x *vmIndex) remember(moref string, ref events.Ref) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.known[ref]; ok && old != moref {
		delete(x.refs, old)
	}
	x.refs[moref], x.known[ref] = ref, moref
}

// forget drops ref's VM, once the object is being deleted.
func (x *vmIndex) forget(ref events.Ref) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if moref, ok := x.known[ref]; ok {
		delete(x.refs, moref)
		delete(x.known, ref)
	}
}

// drop forgets the VM moref, destroyed: whoever's it was, it has no power to watch any more
// (the index would otherwise keep every VM that ever had a power event, vmop's or not).
func (x *vmIndex) drop(moref string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ref, ok := x.refs[moref]; ok && x.known[ref] == moref {
		delete(x.known, ref)
	}
	delete(x.refs, moref)
}

// lookup returns the object whose VM moref is; ok is false for a VM that is not vmop's
// or no longer exists.
func (x *vmIndex) lookup(ctx context.Context, vc *govmomi.Client, moref string) (ref events.Ref, ok bool, err error) {
	x.mu.Lock()
	ref, seen := x.refs[moref]
	x.mu.Unlock()
	if seen {
		return ref, ref != events.Ref{}, nil
	}
	var vm mo.VirtualMachine
	err = property.DefaultCollector(vc.Client).RetrieveOne(ctx,
		types.ManagedObjectReference{Type: "VirtualMachine", Value: moref}, []string{objectKeyProperty}, &vm)
	if fault.Is(err, &types.ManagedObjectNotFound{}) {
		return events.Ref{}, false, nil // gone: nothing to correct
	}
	if err != nil {
		return events.Ref{}, false, fmt.Errorf("read ExtraConfig of VM %s: %w", moref, err)
	}
	ref, ok = objectOf(vm.Config)
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, taught := x.refs[moref]; !taught { // a reconcile may have taught it meanwhile
		x.refs[moref] = ref
		if ok {
			x.known[ref] = moref
		}
	}
	return ref, ok, nil
}

// objectKeyProperty is the one ExtraConfig key lookup reads: the whole ExtraConfig may hold
// a bootstrap's user data, large to send for one key.
const objectKeyProperty = `config.extraConfig["` + vcenter.KeyObject + `"]`

// objectOf reads the VirtualMachine object a VM's ExtraConfig names.
func objectOf(cfg *types.VirtualMachineConfigInfo) (events.Ref, bool) {
	if cfg == nil {
		return events.Ref{}, false
	}
	for _, o := range cfg.ExtraConfig {
		opt := o.GetOptionValue()
		if opt.Key != vcenter.KeyObject {
			continue
		}
		v, _ := opt.Value.(string)
		ns, name, found := strings.Cut(v, "/")
		ref := events.Ref{Plural: plural, Namespace: ns, Name: name}
		if !found || ref.Validate() != nil {
			return events.Ref{}, false
		}
		return ref, true
	}
	return events.Ref{}, false
}
