package main

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/cns"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// watchCalls are the long polls of the services' vCenter watches: they return when
// vCenter changes, whoever changed it, and are not a reconcile's reads.
var watchCalls = []string{"WaitForUpdatesEx", "WaitForUpdates"}

// A volume change concerns storage alone: placement, network, power and crypto make no
// vCenter call for it (counted by client, from their sessions' calls) while every one of
// them reports the new generation.
func TestVolumeChangeConcernsOnlyStorage(t *testing.T) {
	tp := newTopology(t)
	tp.env["VMOP_GUEST_POLL"] = "1h" // network's guest polls would read vCenter meanwhile
	tp.start("nats")
	tp.waitListening(tp.env["VMOP_NATS_ADDR"])
	tp.start("vcsim")
	tp.waitListening(tp.env["VMOP_VCSIM_ADDR"])
	for _, role := range []string{"api", "placement", "power", "storage", "network", "crypto"} {
		tp.start(role)
	}
	vc, err := vcenter.Connect(t.Context(), tp.vcenter(t))
	if err != nil {
		t.Fatal(err)
	}
	cnsClient, err := cns.NewClient(t.Context(), vc.Client)
	if err != nil {
		t.Fatal(err)
	}
	tp.eventually("gateway serving the seeded inventory", tp.ready)
	volumeID := createVolumes(t, cnsClient, sharedDatastore(t, vc.Client), 1, 1024)[0].id
	tp.apply(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: my-pvc
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: Block
  resources: {requests: {storage: 1Gi}}
  storageClassName: my-storage-class
  volumeName: %s
`, volumeID), "")
	tp.apply(strings.TrimSuffix(seedVMWithVolume, `  volumes:
  - name: my-disk-1
    persistentVolumeClaim:
      claimName: my-pvc
`), "")
	tp.waitPower("my-vm", "PoweredOn")
	settled := tp.waitAllObserved("my-vm")

	before := vcenterCallsByClient(t)
	tp.kubectl("patch", "vm", "my-vm", "-n", "my-namespace", "--type=json", "-p",
		`[{"op":"add","path":"/spec/volumes/-","value":{"name":"my-disk-1","persistentVolumeClaim":{"claimName":"my-pvc"}}}]`)
	tp.eventually("my-disk-1 attached", func() bool {
		return tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o",
			`jsonpath={.status.volumes[?(@.name=="my-disk-1")].attached}`) == "true"
	})
	if gen := tp.waitAllObserved("my-vm"); gen <= settled {
		t.Fatalf("generation %d after the volume change, want more than %d", gen, settled)
	}
	after := vcenterCallsByClient(t)
	for _, svc := range []string{model.ServicePlacement, model.ServiceNetwork, model.ServicePower, model.ServiceCrypto} {
		if made := callsSince(before, after, svc); len(made) > 0 {
			t.Errorf("%s called vCenter for a volume change: %v", svc, made)
		}
	}
	if made := callsSince(before, after, model.ServiceStorage); len(made) == 0 {
		t.Errorf("storage made no vCenter call to attach the volume: the count is broken")
	}

	// Placement writes the zone label once it placed a VM: a record write that concerns no
	// other service. The label is taken away behind the gateway's back, placement writes it
	// again, and each of the others passes over both writes without a vCenter call.
	others := []string{model.ServiceNetwork, model.ServicePower, model.ServiceCrypto, model.ServiceStorage}
	zone := tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", `jsonpath={.metadata.labels.topology\.kubernetes\.io/zone}`)
	before, skipped := vcenterCallsByClient(t), unconcernedByService(t)
	_, admin := natsAs(t, tp.env["VMOP_NATS_URL"], tp.data, adminIdentity)
	ref := events.Ref{Plural: "virtualmachines", Namespace: "my-namespace", Name: "my-vm"}
	rec, err := events.LastSpec(t.Context(), admin, ref)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := model.DecodeObject(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	delete(model.Child(model.Child(obj, "metadata"), "labels"), model.LabelZone)
	unlabelled, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.AppendSpec(t.Context(), admin, ref, events.OpPut, unlabelled, rec.Seq, nil); err != nil {
		t.Fatal(err)
	}
	tp.eventually("placement labelling the VM again and the others passing over both writes", func() bool {
		now := unconcernedByService(t)
		for _, svc := range others {
			if now[svc]-skipped[svc] < 2 {
				return false
			}
		}
		return tp.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", `jsonpath={.metadata.labels.topology\.kubernetes\.io/zone}`) == zone
	})
	after = vcenterCallsByClient(t)
	for _, svc := range others {
		if made := callsSince(before, after, svc); len(made) > 0 {
			t.Errorf("%s called vCenter for the zone label: %v", svc, made)
		}
	}
}

// unconcernedByService reads vmop_reconciles_unconcerned_total of virtualmachines by service.
func unconcernedByService(t *testing.T) map[string]float64 {
	out := map[string]float64{}
	for labels, v := range counterSamples(t, "vmop_reconciles_unconcerned_total", reconcile.Collectors()...) {
		if labels["kind"] == "virtualmachines" {
			out[labels["service"]] += v
		}
	}
	return out
}

// counterSamples yields the samples of the counter name among collectors, with their labels.
func counterSamples(t *testing.T, name string, collectors ...prometheus.Collector) iter.Seq2[map[string]string, float64] {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return func(yield func(map[string]string, float64) bool) {
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if !yield(labels, m.GetCounter().GetValue()) {
					return
				}
			}
		}
	}
}

// waitAllObserved waits until every service's slice of the VM speaks about its current
// generation, and returns that generation.
func (tp *topology) waitAllObserved(name string) int64 {
	var gen int64
	tp.eventually(name+" observed by every service", func() bool {
		out := tp.kubectl("get", "vm", name, "-n", "my-namespace", "-o",
			`jsonpath={.metadata.generation} {.status.conditions[*].observedGeneration}`)
		fields := strings.Fields(out)
		if len(fields) < 2 {
			return false
		}
		for _, f := range fields[1:] {
			if f != fields[0] {
				return false
			}
		}
		_, err := fmt.Sscan(fields[0], &gen)
		return err == nil
	})
	return gen
}

// vcenterCallsByClient reads vmop_vcenter_calls_total by client and method, without the watches'
// long polls.
func vcenterCallsByClient(t *testing.T) map[string]float64 {
	out := map[string]float64{}
	for labels, v := range counterSamples(t, "vmop_vcenter_calls_total", vcenter.Collectors()...) {
		if !slices.Contains(watchCalls, labels["method"]) {
			out[labels["client"]+" "+labels["method"]] += v
		}
	}
	return out
}

// callsSince lists the methods client called between the two counts, with how often.
func callsSince(before, after map[string]float64, client string) []string {
	var made []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if method, ok := strings.CutPrefix(k, client+" "); ok && after[k] > before[k] {
			made = append(made, fmt.Sprintf("%s×%.0f", method, after[k]-before[k]))
		}
	}
	return made
}
