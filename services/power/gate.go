package power

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// inputs are the services whose slices gate a power-on; a new slice of one of them
// triggers a reconcile.
var inputs = []string{model.ServicePlacement, model.ServiceStorage, model.ServiceNetwork, model.ServiceCrypto}

// inputStatus is the part of another service's slice that power reads.
type inputStatus struct {
	UniqueID   string             `json:"uniqueID"`
	Conditions []metav1.Condition `json:"conditions"`
}

// prerequisite is a condition another service must report True before a power-on.
type prerequisite struct {
	service, condition string
	// currentSpec: the slice must speak about the object's current generation, so that
	// the VM is powered on only once that part is in line with the spec being applied.
	currentSpec bool
}

// prerequisites of a power-on, in the order the VM comes to life (DESIGN §4).
var prerequisites = []prerequisite{
	{service: model.ServicePlacement, condition: model.ConditionCreated},
	{service: model.ServiceStorage, condition: model.ConditionStorageReady, currentSpec: true},
	{service: model.ServiceNetwork, condition: model.ConditionNetworkReady, currentSpec: true},
	// The guest's bootstrap is delivered (a customization is handed to vCenter) before the
	// power-on that applies it: a VM never boots uncustomized.
	{service: model.ServiceNetwork, condition: model.ConditionBootstrapReady, currentSpec: true},
	{service: model.ServiceCrypto, condition: model.ConditionEncryptionSynced, currentSpec: true},
}

// gate is what stands between the VM and a power-on.
type gate struct {
	checks map[string]string // pending power-on checks: component → annotation value
	waits  []string          // unmet prerequisites, each "<condition> (<why>)"
}

func (g gate) open() bool { return len(g.checks) == 0 && len(g.waits) == 0 }

// resuming is the gate of a suspended VM's power-on: its guest goes on where it stopped,
// and a suspended VM takes no reconfigure, so what the other services wait to do (a
// customization for the next boot, a disk, an encryption or a vTPM that needs the VM
// off) cannot be done before it anyway: only the checks and the VM's existence hold it
// back, and the rest is done once it is off again.
func (g gate) resuming() gate {
	g.waits = slices.DeleteFunc(slices.Clone(g.waits), func(w string) bool { return !waitsForCreated(w) })
	return g
}

// waitsForCreated reports whether the wait w (see gate.waits) is for the VM's creation.
func waitsForCreated(w string) bool { return strings.HasPrefix(w, model.ConditionCreated+" (") }

// pendingChecks returns the poweron.check.vmoperator.vmware.com/<component> annotations
// by component.
func pendingChecks(annotations map[string]string) map[string]string {
	checks := map[string]string{}
	for k, v := range annotations {
		if component, ok := strings.CutPrefix(k, model.PowerOnCheckPrefix); ok {
			checks[component] = v
		}
	}
	return checks
}

// describeChecks lists checks as `component="value"`, sorted by component.
func describeChecks(checks map[string]string) string {
	parts := make([]string, 0, len(checks))
	for _, c := range slices.Sorted(maps.Keys(checks)) {
		parts = append(parts, c+"="+strconv.Quote(checks[c]))
	}
	return strings.Join(parts, ", ")
}

// readInputs decodes the input services' slices; a slice that cannot be decoded counts
// as absent.
func readInputs(o reconcile.Object) map[string]inputStatus {
	in := make(map[string]inputStatus, len(inputs))
	for _, svc := range inputs {
		s, ok := o.Slices[svc]
		if !ok {
			continue
		}
		var st inputStatus
		if len(s.Status) > 0 && json.Unmarshal(s.Status, &st) != nil {
			continue
		}
		in[svc] = st
	}
	return in
}

// unmetPrerequisites says which prerequisites do not hold yet; until the VM is created,
// only that, since nothing else can be ready before. networkDisabled: a VM without
// networking has no VirtualMachineNetworkReady (api-rules §8), so a current network slice
// without it is enough.
func unmetPrerequisites(o reconcile.Object, in map[string]inputStatus, networkDisabled bool) []string {
	var waits []string
	for _, p := range prerequisites {
		why := p.unmet(o, in, networkDisabled)
		if why == "" {
			continue
		}
		waits = append(waits, fmt.Sprintf("%s (%s)", p.condition, why))
		if p.service == model.ServicePlacement {
			break
		}
	}
	return waits
}

func (p prerequisite) unmet(o reconcile.Object, in map[string]inputStatus, networkDisabled bool) string {
	st, ok := in[p.service]
	if !ok {
		return "not reported by " + p.service
	}
	if gen := o.Slices[p.service].Generation; p.currentSpec && gen < o.Meta.Generation {
		return fmt.Sprintf("%s has not reconciled generation %d yet", p.service, o.Meta.Generation)
	}
	c := reconcile.FindCondition(st.Conditions, p.condition)
	switch {
	case c == nil && p.condition == model.ConditionNetworkReady && networkDisabled:
		return ""
	case c == nil:
		return "not reported by " + p.service
	case c.Status != metav1.ConditionTrue:
		return strings.TrimSuffix(fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message), ": ")
	case p.service == model.ServicePlacement && st.UniqueID == "":
		return "placement reports no uniqueID"
	}
	return ""
}

// holdForGroup keeps a group-driven power change until its instant, the
// apply-power-state-time annotation the group gave the VM (api-rules §7.1, PWR-9): it
// notes why in st, asks for a reconcile at that instant and reports whether to hold.
func (r *reconciler) holdForGroup(o reconcile.Object, st *syncState) bool {
	v := o.Meta.Annotations[model.AnnotationApplyPowerStateTime]
	at, err := time.Parse(time.RFC3339Nano, v)
	if v == "" || err != nil || !time.Now().Before(at) {
		return false // none, past, or unreadable (admission rejects that: PWR-9)
	}
	st.note = "the group applies it at " + v
	if r.wake != nil {
		r.wake(o.Ref, at)
	}
	return true
}
