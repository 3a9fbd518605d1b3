package power

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

func TestPendingChecks(t *testing.T) {
	annotations := map[string]string{
		model.PowerOnCheckPrefix + "backup": `wait "full"`,
		model.PowerOnCheckPrefix + "av":     "",
		model.DeleteCheckPrefix + "backup":  "not a power-on check",
		"other":                             "x",
	}
	checks := pendingChecks(annotations)
	if diff := cmp.Diff(map[string]string{"backup": `wait "full"`, "av": ""}, checks); diff != "" {
		t.Errorf("pendingChecks (-want +got):\n%s", diff)
	}
	if got, want := describeChecks(checks), `av="", backup="wait \"full\""`; got != want {
		t.Errorf("describeChecks = %s, want %s", got, want)
	}
}

func TestUnmetPrerequisites(t *testing.T) {
	ready := func(cond string) map[string]any {
		return map[string]any{"conditions": []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue, Reason: "True"}}}
	}
	placed := ready(model.ConditionCreated)
	placed["uniqueID"] = "vm-1"
	all := map[string]map[string]any{
		model.ServicePlacement: placed,
		model.ServiceStorage:   ready(model.ConditionStorageReady),
		model.ServiceNetwork: {"conditions": []metav1.Condition{
			{Type: model.ConditionNetworkReady, Status: metav1.ConditionTrue, Reason: "True"},
			{Type: model.ConditionBootstrapReady, Status: metav1.ConditionTrue, Reason: "True"},
		}},
		model.ServiceCrypto: ready(model.ConditionEncryptionSynced),
	}
	with := func(svc string, st map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for k, v := range all {
			out[k] = v
		}
		if st == nil {
			delete(out, svc)
		} else {
			out[svc] = st
		}
		return out
	}
	tests := []struct {
		name            string
		slices          map[string]map[string]any
		generations     map[string]int64 // per service, default the object's
		networkDisabled bool
		want            []string
	}{
		{name: "all ready", slices: all},
		{name: "storage missing", slices: with(model.ServiceStorage, nil),
			want: []string{"VirtualMachineStorageReady (not reported by storage)"}},
		{name: "network not ready", slices: with(model.ServiceNetwork, map[string]any{"conditions": []metav1.Condition{{
			Type: model.ConditionNetworkReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "no IP left"}}}),
			want: []string{"VirtualMachineNetworkReady (False NotReady: no IP left)", "VirtualMachineBootstrapReady (not reported by network)"}},
		{name: "bootstrap not delivered", slices: with(model.ServiceNetwork, map[string]any{"conditions": []metav1.Condition{
			{Type: model.ConditionNetworkReady, Status: metav1.ConditionTrue, Reason: "True"},
			{Type: model.ConditionBootstrapReady, Status: metav1.ConditionFalse, Reason: "RequiredKeyNotFound", Message: `CloudInit: secret "s" not found`}}}),
			want: []string{`VirtualMachineBootstrapReady (False RequiredKeyNotFound: CloudInit: secret "s" not found)`}},
		{name: "crypto behind the spec", slices: all, generations: map[string]int64{model.ServiceCrypto: 2},
			want: []string{"VirtualMachineEncryptionSynced (crypto has not reconciled generation 3 yet)"}},
		{name: "placement behind the spec is fine", slices: all, generations: map[string]int64{model.ServicePlacement: 1}},
		{name: "placement without uniqueID", slices: with(model.ServicePlacement, ready(model.ConditionCreated)),
			want: []string{"VirtualMachineCreated (placement reports no uniqueID)"}},
		{name: "networking disabled: no condition needed", slices: with(model.ServiceNetwork, map[string]any{"conditions": []metav1.Condition{
			{Type: model.ConditionBootstrapReady, Status: metav1.ConditionTrue, Reason: "True"}}}), networkDisabled: true},
		{name: "networking enabled: condition needed", slices: with(model.ServiceNetwork, map[string]any{}),
			want: []string{"VirtualMachineNetworkReady (not reported by network)", "VirtualMachineBootstrapReady (not reported by network)"}},
		{name: "nothing: creation comes first", slices: map[string]map[string]any{}, want: []string{
			"VirtualMachineCreated (not reported by placement)"}},
		{name: "created and nothing else", slices: map[string]map[string]any{model.ServicePlacement: placed}, want: []string{
			"VirtualMachineStorageReady (not reported by storage)", "VirtualMachineNetworkReady (not reported by network)",
			"VirtualMachineBootstrapReady (not reported by network)", "VirtualMachineEncryptionSynced (not reported by crypto)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := reconcile.Object{Meta: reconcile.Meta{UID: "u", Generation: 3}, Slices: map[string]events.Slice{}}
			for svc, st := range tt.slices {
				raw, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				gen, ok := tt.generations[svc]
				if !ok {
					gen = 3
				}
				o.Slices[svc] = events.Slice{Service: svc, UID: "u", Generation: gen, Status: raw}
			}
			got := unmetPrerequisites(o, readInputs(o), tt.networkDisabled)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unmet (-want +got):\n%s", diff)
			}
		})
	}
}
