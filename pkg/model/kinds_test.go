package model

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindNamesAreUnique(t *testing.T) {
	plurals := map[string]string{}   // group/plural -> kind
	kindNames := map[string]string{} // group/kind -> kind
	resourceNames := map[string]string{}
	for _, k := range Kinds() {
		for what, seen := range map[string]map[string]string{
			"plural " + k.Plural: plurals,
			"kind " + k.Kind:     kindNames,
		} {
			key := k.Group + "/" + what
			if prev, dup := seen[key]; dup {
				t.Errorf("%s: %s already used by %s", k.Kind, key, prev)
			}
			seen[key] = k.Kind
		}
		// kubectl resolves short names and singulars across all groups, so they must be
		// unique among every name a kind answers to.
		for _, name := range append([]string{k.Singular}, k.ShortNames...) {
			if prev, dup := resourceNames[name]; dup {
				t.Errorf("%s: name %q already used by %s", k.Kind, name, prev)
			}
			resourceNames[name] = k.Kind
		}
	}
}

func TestKindNamingConventions(t *testing.T) {
	for _, k := range Kinds() {
		if k.ListKind != k.Kind+"List" {
			t.Errorf("%s: ListKind %q", k.Kind, k.ListKind)
		}
		if k.Singular != strings.ToLower(k.Kind) {
			t.Errorf("%s: Singular %q", k.Kind, k.Singular)
		}
		if k.Plural != strings.ToLower(k.Plural) || !strings.HasPrefix(k.Plural, k.Singular[:len(k.Singular)-1]) {
			t.Errorf("%s: Plural %q", k.Kind, k.Plural)
		}
		if k.Version == "" {
			t.Errorf("%s: no version", k.Kind)
		}
	}
}

func TestEveryKindEndsWithAge(t *testing.T) {
	for _, k := range Kinds() {
		if len(k.Columns) == 0 {
			t.Errorf("%s: no columns", k.Kind)
			continue
		}
		age := len(k.Columns) - 1
		if k.Kind == "ResourceQuota" {
			age = 0 // kubectl prints quotas NAME AGE REQUEST LIMIT
		}
		if diff := cmp.Diff(ageColumn, k.Columns[age]); diff != "" {
			t.Errorf("%s: column %d is not Age (-want +got):\n%s", k.Kind, age, diff)
		}
		for _, c := range k.Columns {
			if c.Name == "" || c.Description == "" || (c.Value == nil) != strings.HasPrefix(c.JSONPath, ".") {
				t.Errorf("%s: incomplete column %+v", k.Kind, c)
			}
			switch c.Type {
			case "string", "integer", "number", "boolean", "date":
			default:
				t.Errorf("%s: column %s has type %q", k.Kind, c.Name, c.Type)
			}
		}
	}
}

func TestKindRegistry(t *testing.T) {
	tests := []struct {
		group, plural   string
		wantAPIVersion  string
		wantShortNames  []string
		wantNamespaced  bool
		wantStatus      bool
		wantPrivileged  bool
		wantOwners      []string
		wantColumnNames []string
		wantWideColumns []string
	}{
		{
			group: GroupVMOperator, plural: "virtualmachines", wantAPIVersion: "vmoperator.vmware.com/v1alpha5",
			wantShortNames: []string{"vm"}, wantNamespaced: true, wantStatus: true,
			wantOwners:      []string{"placement", "power", "storage", "network", "crypto"},
			wantColumnNames: []string{"Power-State", "Status", "Ready", "Class", "Image", "Primary-IP4", "Age"},
			wantWideColumns: []string{"Class", "Image", "Primary-IP4"},
		},
		{
			group: GroupVMOperator, plural: "virtualmachinegroups", wantAPIVersion: "vmoperator.vmware.com/v1alpha5",
			wantShortNames: []string{"vmg"}, wantNamespaced: true, wantStatus: true,
			wantColumnNames: []string{"Ready", "Placement", "Age"},
		},
		{
			group: GroupVMOperator, plural: "clustervirtualmachineimages", wantAPIVersion: "vmoperator.vmware.com/v1alpha5",
			wantShortNames: []string{"cvmi", "cvmimage", "clustervmi", "clustervmimage"}, wantStatus: true, wantPrivileged: true,
			wantColumnNames: []string{"Display Name", "Type", "Image Version", "OS Name", "OS Version", "Hardware Version", "Age"},
		},
		{
			group: GroupEncryption, plural: "encryptionclasses", wantAPIVersion: "encryption.vmware.com/v1alpha1",
			wantShortNames: []string{"encclass"}, wantNamespaced: true, wantStatus: true, wantPrivileged: true,
			wantColumnNames: []string{"KeyProvider", "KeyID", "Ready", "Age"},
		},
		{
			group: GroupStorage, plural: "storageclasses", wantAPIVersion: "storage.k8s.io/v1",
			wantShortNames: []string{"sc"}, wantPrivileged: true,
			wantColumnNames: []string{"Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"},
		},
		{
			group: GroupCore, plural: "persistentvolumeclaims", wantAPIVersion: "v1",
			wantShortNames: []string{"pvc"}, wantNamespaced: true, wantStatus: true,
			wantOwners:      []string{ServiceStorage},
			wantColumnNames: []string{"Status", "Volume", "Capacity", "Access Modes", "StorageClass", "Age"},
		},
		{
			group: GroupCore, plural: "namespaces", wantAPIVersion: "v1",
			wantShortNames: []string{"ns"}, wantStatus: true, wantPrivileged: true,
			wantColumnNames: []string{"Status", "Age"},
		},
		{
			group: GroupCore, plural: "resourcequotas", wantAPIVersion: "v1",
			wantShortNames: []string{"quota"}, wantNamespaced: true, wantStatus: true, wantPrivileged: true,
			wantColumnNames: []string{"Age", "Request", "Limit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.plural, func(t *testing.T) {
			k, ok := KindFor(tt.group, tt.plural)
			if !ok {
				t.Fatalf("KindFor(%q, %q) found nothing", tt.group, tt.plural)
			}
			var names, wide []string
			for _, c := range k.Columns {
				names = append(names, c.Name)
				if c.Priority > 0 {
					wide = append(wide, c.Name)
				}
			}
			got := []any{k.APIVersion(), k.ShortNames, k.Namespaced, k.HasStatus, k.PrivilegedWrite, k.Owners, names, wide}
			want := []any{tt.wantAPIVersion, tt.wantShortNames, tt.wantNamespaced, tt.wantStatus, tt.wantPrivileged, tt.wantOwners, tt.wantColumnNames, tt.wantWideColumns}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got) as [apiVersion shortNames namespaced status privileged owners columns wide]:\n%s", diff)
			}
		})
	}
}

// Only VMs and claims have services that release them: the VM's services tear down its
// vSphere VM, storage deletes a claim's CNS volume.
func TestOnlyVirtualMachinesAndClaimsHaveOwners(t *testing.T) {
	for _, k := range Kinds() {
		if k.Kind != "VirtualMachine" && k.Kind != "PersistentVolumeClaim" && len(k.Owners) > 0 {
			t.Errorf("%s has owners %v", k.Kind, k.Owners)
		}
	}
}

func TestKindForUnknown(t *testing.T) {
	for _, tt := range []struct{ group, plural string }{
		{GroupVMOperator, "virtualmachine"}, // singular, not plural
		{GroupCore, "virtualmachines"},      // wrong group
		{"cns.vmware.com", "cnsunregistervolumes"},
	} {
		if k, ok := KindFor(tt.group, tt.plural); ok {
			t.Errorf("KindFor(%q, %q) = %s, want none", tt.group, tt.plural, k.Kind)
		}
	}
}

func TestKindsReturnsACopy(t *testing.T) {
	first := Kinds()
	first[0].ShortNames[0] = "changed"
	first[0].Columns[0].Name = "changed"
	first[0].Owners[0] = "changed"
	first[0].Plural = "changed"
	sameFunc := cmp.Comparer(func(a, b func([]byte) any) bool { return (a == nil) == (b == nil) })
	if diff := cmp.Diff(kinds, Kinds(), sameFunc); diff != "" {
		t.Errorf("modifying the result of Kinds changed the registry:\n%s", diff)
	}
}
