package model

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Fixtures of the rule tables: a namespace with the seed's inventory, a minimal VM that
// passes every rule, and a runner that admits a case through admitVM.

const ruleNS = "rules-ns"

var ruleNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func ruleStorageClass(name string, params map[string]string, labels map[string]string) *StorageClass {
	return &StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Provisioner: "csi.vsphere.vmware.com", Parameters: params}
}

// ruleEnv is a non-privileged user in ruleNS.
func ruleEnv() VMEnv {
	policy := map[string]string{StoragePolicyIDParameter: "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"}
	return VMEnv{
		BuildVersion: "v-test",
		Now:          func() time.Time { return ruleNow },
		NewUUID:      counterUUIDs(),
		Namespace:    NamespaceSettings{DefaultNetwork: "VM Network", Zones: []string{"zone-a", "zone-b"}},
		Lookup: &fakeLookup{
			nsImages: testImages.ns, clusterImages: testImages.cluster,
			storageClasses: map[string]*StorageClass{
				"my-storage-class":           ruleStorageClass("my-storage-class", policy, nil),
				"my-encrypted-storage-class": ruleStorageClass("my-encrypted-storage-class", policy, map[string]string{EncryptionEnabledLabel: "true"}),
				"no-policy-storage-class":    ruleStorageClass("no-policy-storage-class", nil, nil),
			},
			encryptionClasses: map[string][]EncryptionClass{ruleNS: {
				{ObjectMeta: metav1.ObjectMeta{Name: "my-encryption-class", Namespace: ruleNS, Labels: map[string]string{DefaultEncryptionClassLabel: "true"}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "other-encryption-class", Namespace: ruleNS}},
			}},
		},
	}
}

// asAdmin makes the caller a system:masters member: privileged and upgrade-exempt.
func asAdmin(env *VMEnv) { env.Privileged, env.UpgradeExempt = true, true }

// ruleVM is the smallest VM every rule accepts.
func ruleVM() *VirtualMachine {
	vm := &VirtualMachine{Spec: VirtualMachineSpec{ClassName: "my-vm-class", ImageName: "photon-5", StorageClass: "my-storage-class"}}
	vm.Name, vm.Namespace = "my-vm", ruleNS
	return vm
}

// markUpgraded stamps the VM service's schema-upgrade annotations for ruleEnv's build.
func markUpgraded(vm *VirtualMachine) {
	setAnnotation(vm, AnnotationUpgradedToBuild, "v-test")
	setAnnotation(vm, AnnotationUpgradedToSchema, SchemaVersion)
	setAnnotation(vm, AnnotationUpgradedToFeature, "7")
}

func setAnnotation(vm *VirtualMachine, k, v string) {
	if vm.Annotations == nil {
		vm.Annotations = map[string]string{}
	}
	vm.Annotations[k] = v
}

func setLabel(vm *VirtualMachine, k, v string) {
	if vm.Labels == nil {
		vm.Labels = map[string]string{}
	}
	vm.Labels[k] = v
}

// vmCase is one row of a rule table: a create of ruleVM changed by change, or (update
// true) an update, changed by change, of ruleVM as stored: changed by stored, created by
// an admin, then changed by later (what earlier updates left behind, not re-admitted).
type vmCase struct {
	name                  string
	update                bool
	stored, later, change func(vm *VirtualMachine)
	env                   func(env *VMEnv)
	code                  int             // 200, 403 or 422
	path                  string          // a refusal carries an error at this path...
	typ                   field.ErrorType // ...of this type
}

func runVMCases(t *testing.T, cases []vmCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm, old := ruleVM(), (*VirtualMachine)(nil)
			if tc.update {
				old = storedVM(t, tc.stored)
				if tc.later != nil {
					tc.later(old)
				}
				vm = cloneVM(t, old)
			}
			if tc.change != nil {
				tc.change(vm)
			}
			env := ruleEnv()
			if tc.env != nil {
				tc.env(&env)
			}
			code, errs := admitVM(t, vm, old, env)
			checkAdmission(t, code, errs, tc.code, tc.path, tc.typ)
		})
	}
}

// storedVM is ruleVM changed by change and created by an admin: what the store holds.
func storedVM(t *testing.T, change func(vm *VirtualMachine)) *VirtualMachine {
	t.Helper()
	vm := ruleVM()
	if change != nil {
		change(vm)
	}
	env := ruleEnv()
	asAdmin(&env)
	if code, errs := admitVM(t, vm, nil, env); code != 200 {
		t.Fatalf("creating the stored object: %d %v", code, errs)
	}
	return vm
}

func cloneVM(t *testing.T, vm *VirtualMachine) *VirtualMachine {
	t.Helper()
	raw, err := json.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	out := new(VirtualMachine)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkAdmission compares an outcome with the expected code and, for a refusal, finds an
// error of the expected path and type among those reported.
func checkAdmission(t *testing.T, code int, errs field.ErrorList, wantCode int, path string, typ field.ErrorType) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("code = %d, want %d; errors: %v", code, wantCode, errs)
	}
	if wantCode == 200 {
		return
	}
	for _, e := range errs {
		if e.Field == path && e.Type == typ {
			return
		}
	}
	t.Errorf("no %s error at %s among %v", typ, path, errs)
}
