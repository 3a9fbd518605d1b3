package v1alpha4

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/model"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func equalJSON(t *testing.T, what string, got map[string]any, want string) {
	t.Helper()
	if w := decode(t, want); !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s:\n got %s\nwant %s", what, g, want)
	}
}

// TestVirtualMachineConversion converts v1alpha4 documents to the hub and back: fields
// that moved land in their v1alpha5 place, and the way back restores the v1alpha4 form.
func TestVirtualMachineConversion(t *testing.T) {
	cases := []struct {
		name, v1alpha4, hub string
	}{{
		name:     "upstream example",
		v1alpha4: `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","metadata":{"name":"my-vm"},"spec":{"className":"my-vm-class","imageName":"vmi-0a0044d7c690bcbea","storageClass":"my-storage-class","bootstrap":{"cloudInit":{"cloudConfig":{}}}}}`,
		hub:      `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":"my-vm"},"spec":{"className":"my-vm-class","imageName":"vmi-0a0044d7c690bcbea","storageClass":"my-storage-class","bootstrap":{"cloudInit":{"cloudConfig":{}}}}}`,
	}, {
		name:     "cdrom moves under hardware",
		v1alpha4: `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","spec":{"cdrom":[{"name":"cd1","image":{"kind":"VirtualMachineImage","name":"vmi-iso"},"connected":true}]}}`,
		hub:      `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","spec":{"hardware":{"cdrom":[{"name":"cd1","image":{"kind":"VirtualMachineImage","name":"vmi-iso"},"connected":true}]}}}`,
	}, {
		name:     "boot order strings become devices",
		v1alpha4: `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","spec":{"bootOptions":{"bootOrder":["Disk","Network"],"bootRetry":"Enabled"}}}`,
		hub:      `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","spec":{"bootOptions":{"bootOrder":[{"type":"Disk"},{"type":"Network"}],"bootRetry":"Enabled"}}}`,
	}, {
		name:     "current snapshot reference becomes a name",
		v1alpha4: `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","spec":{"currentSnapshot":{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachineSnapshot","name":"snap1"}},"status":{"currentSnapshot":{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachineSnapshot","name":"snap1"},"rootSnapshots":[{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachineSnapshot","name":"snap0"}]}}`,
		hub:      `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","spec":{"currentSnapshotName":"snap1"},"status":{"currentSnapshot":{"type":"Managed","name":"snap1"},"rootSnapshots":[{"type":"Managed","name":"snap0"}]}}`,
	}, {
		name:     "status passes through",
		v1alpha4: `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","status":{"powerState":"PoweredOn","zone":"zone-a","volumes":[{"name":"disk","type":"Classic","attached":true}],"network":{"primaryIP4":"10.0.0.2"}}}`,
		hub:      `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","status":{"powerState":"PoweredOn","zone":"zone-a","volumes":[{"name":"disk","type":"Classic","attached":true}],"network":{"primaryIP4":"10.0.0.2"}}}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, tc.v1alpha4)
			if unknown := ToHub("VirtualMachine", obj); len(unknown) > 0 {
				t.Errorf("unknown fields %v", unknown)
			}
			equalJSON(t, "to hub", obj, tc.hub)
			FromHub("VirtualMachine", obj)
			equalJSON(t, "back", obj, tc.v1alpha4)
		})
	}
}

// TestVirtualMachineFromHubDropsHubOnlyFields checks what v1alpha4 readers see of an
// object that uses v1alpha5-only fields.
func TestVirtualMachineFromHubDropsHubOnlyFields(t *testing.T) {
	obj := decode(t, hubOnlyVM)
	FromHub("VirtualMachine", obj)
	equalJSON(t, "v1alpha4", obj, `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","metadata":{"name":"vm","uid":"u1"},
		"spec":{"className":"small","cdrom":[{"name":"cd1","image":{"name":"iso"}}],"crypto":{"encryptionClassName":"enc"},
			"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"pvc"}}],
			"bootOptions":{"bootOrder":["Disk","CDRom"]},"currentSnapshot":{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachineSnapshot","name":"s1"}},
		"status":{"powerState":"PoweredOn","crypto":{"keyID":"k"},"volumes":[{"name":"data","type":"Managed"}],"storage":{"usage":{"disks":"1Gi"}},
			"rootSnapshots":[{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachineSnapshot","name":"s0"}]}}`)
}

// hubOnlyVM is a stored v1alpha5 object using every v1alpha5-only field vmop models.
const hubOnlyVM = `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":{"name":"vm","uid":"u1"},
	"spec":{"className":"small",
		"hardware":{"cdrom":[{"name":"cd1","image":{"name":"iso"},"controllerType":"SATA","controllerBusNumber":0,"unitNumber":1}],"scsiControllers":[{"busNumber":0,"type":"ParaVirtual"}]},
		"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p"}],
		"crypto":{"encryptionClassName":"enc","vTPMMode":"Clone"},
		"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"pvc"},"controllerType":"SCSI","controllerBusNumber":0,"unitNumber":3,"diskMode":"Persistent","sharingMode":"None","removable":true,"applicationType":"OracleRAC"}],
		"bootOptions":{"bootOrder":[{"type":"Disk","name":"data"},{"type":"CDRom"}]},
		"currentSnapshotName":"s1"},
	"status":{"powerState":"PoweredOn","provider":{"creationTimestamp":"2024-01-01T00:00:00Z"},"guest":{"guestID":"ubuntu64Guest"},
		"hardware":{"cpu":{"total":2}},"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p","generation":1}],
		"crypto":{"keyID":"k","hasVTPM":true},"volumes":[{"name":"data","type":"Managed","controllerType":"SCSI","diskMode":"Persistent"}],
		"storage":{"usage":{"disks":"1Gi","snapshots":{"vm":"1Gi"}}},
		"rootSnapshots":[{"type":"Managed","name":"s0"},{"type":"Unmanaged","name":""}]}}`

// TestVirtualMachineRestoreKeepsHubOnlyFields is a read-modify-write through v1alpha4:
// read (FromHub), edit, write (ToHub), Restore from the stored object.
func TestVirtualMachineRestoreKeepsHubOnlyFields(t *testing.T) {
	cases := []struct {
		name string
		edit func(v4 map[string]any)
		want string // spec of the hub object to store
	}{{
		name: "unchanged read-back stores the same spec",
		edit: func(map[string]any) {},
		want: `{"className":"small",
			"hardware":{"cdrom":[{"name":"cd1","image":{"name":"iso"},"controllerType":"SATA","controllerBusNumber":0,"unitNumber":1}],"scsiControllers":[{"busNumber":0,"type":"ParaVirtual"}]},
			"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p"}],
			"crypto":{"encryptionClassName":"enc","vTPMMode":"Clone"},
			"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"pvc"},"controllerType":"SCSI","controllerBusNumber":0,"unitNumber":3,"diskMode":"Persistent","sharingMode":"None","removable":true,"applicationType":"OracleRAC"}],
			"bootOptions":{"bootOrder":[{"type":"Disk","name":"data"},{"type":"CDRom"}]},
			"currentSnapshotName":"s1"}`,
	}, {
		name: "edits keep hub-only fields of the items they keep",
		edit: func(v4 map[string]any) {
			spec := v4["spec"].(map[string]any)
			spec["className"] = "large"
			spec["cdrom"] = []any{
				map[string]any{"name": "cd2", "image": map[string]any{"name": "iso2"}},
				map[string]any{"name": "cd1", "image": map[string]any{"name": "iso"}, "connected": false},
			}
			spec["bootOptions"] = map[string]any{"bootOrder": []any{"Network", "CDRom"}}
			delete(spec, "crypto")
			delete(spec, "currentSnapshot")
		},
		want: `{"className":"large",
			"hardware":{"cdrom":[{"name":"cd2","image":{"name":"iso2"}},{"name":"cd1","image":{"name":"iso"},"connected":false,"controllerType":"SATA","controllerBusNumber":0,"unitNumber":1}],"scsiControllers":[{"busNumber":0,"type":"ParaVirtual"}]},
			"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p"}],
			"crypto":{"vTPMMode":"Clone"},
			"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"pvc"},"controllerType":"SCSI","controllerBusNumber":0,"unitNumber":3,"diskMode":"Persistent","sharingMode":"None","removable":true,"applicationType":"OracleRAC"}],
			"bootOptions":{"bootOrder":[{"type":"Network"},{"type":"CDRom"}]}}`,
	}, {
		name: "removing every CD-ROM and volume keeps the controllers",
		edit: func(v4 map[string]any) {
			spec := v4["spec"].(map[string]any)
			delete(spec, "cdrom")
			delete(spec, "volumes")
		},
		want: `{"className":"small",
			"hardware":{"scsiControllers":[{"busNumber":0,"type":"ParaVirtual"}]},
			"policies":[{"apiVersion":"vsphere.policy.vmware.com/v1alpha1","kind":"ComputePolicy","name":"p"}],
			"crypto":{"encryptionClassName":"enc","vTPMMode":"Clone"},
			"bootOptions":{"bootOrder":[{"type":"Disk","name":"data"},{"type":"CDRom"}]},
			"currentSnapshotName":"s1"}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stored := decode(t, hubOnlyVM)
			v4 := deepCopy(stored).(map[string]any)
			FromHub("VirtualMachine", v4)
			tc.edit(v4)
			if unknown := ToHub("VirtualMachine", v4); len(unknown) > 0 {
				t.Fatalf("unknown fields %v", unknown)
			}
			Restore("VirtualMachine", v4, stored)
			equalJSON(t, "spec", v4["spec"].(map[string]any), tc.want)
		})
	}
}

// TestToHubReportsFieldsV1alpha4Lacks: v1alpha5-only fields sent to v1alpha4 are unknown
// there, as with the API server, and never reach the stored object.
func TestToHubReportsFieldsV1alpha4Lacks(t *testing.T) {
	obj := decode(t, `{"apiVersion":"vmoperator.vmware.com/v1alpha4","kind":"VirtualMachine","spec":{"className":"small",
		"hardware":{"scsiControllers":[]},"policies":[],"crypto":{"vTPMMode":"Clone"},"volumes":[{"name":"d","unitNumber":1}],"bogus":1}}`)
	unknown := ToHub("VirtualMachine", obj)
	slices.Sort(unknown)
	want := []string{"spec.bogus", "spec.crypto.vTPMMode", "spec.hardware", "spec.policies", "spec.volumes[0].unitNumber"}
	if !slices.Equal(unknown, want) {
		t.Errorf("unknown = %v, want %v", unknown, want)
	}
	equalJSON(t, "hub", obj, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","spec":{"className":"small","crypto":{},"volumes":[{"name":"d"}]}}`)
}

func TestRenamePaths(t *testing.T) {
	for in, want := range map[string]string{
		"spec.hardware.cdrom[0].image.name: Required value":            "spec.cdrom[0].image.name: Required value",
		"spec.bootOptions.bootOrder[1].type: Unsupported value: \"x\"": "spec.bootOptions.bootOrder[1]: Unsupported value: \"x\"",
		"spec.currentSnapshotName":                                     "spec.currentSnapshot.name",
		"spec.className: Required value":                               "spec.className: Required value",
	} {
		if got := RenamePaths("VirtualMachine", in); got != want {
			t.Errorf("RenamePaths(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSchema checks the derived v1alpha4 schema against the upstream v1alpha4 shape.
func TestSchema(t *testing.T) {
	s, ok := SchemaFor("VirtualMachine")
	if !ok {
		t.Fatal("no v1alpha4 schema for VirtualMachine")
	}
	spec, status := s.Properties["spec"], s.Properties["status"]
	for _, f := range []string{"hardware", "policies", "currentSnapshotName"} {
		if spec.Properties[f] != nil {
			t.Errorf("spec.%s is in the v1alpha4 schema", f)
		}
	}
	cdrom := spec.Properties["cdrom"]
	if cdrom == nil || cdrom.ListType != "map" || cdrom.Items.Properties["image"] == nil || cdrom.Items.Properties["controllerType"] != nil {
		t.Errorf("spec.cdrom = %+v", cdrom)
	}
	if order := spec.Properties["bootOptions"].Properties["bootOrder"]; order.Items.Type != "string" || len(order.Items.Enum) != 3 {
		t.Errorf("bootOrder items = %+v", order.Items)
	}
	if ref := spec.Properties["currentSnapshot"]; ref == nil || !slices.Equal(ref.Required, []string{"apiVersion", "kind", "name"}) {
		t.Errorf("spec.currentSnapshot = %+v", ref)
	}
	for _, f := range []string{"provider", "guest", "hardware", "policies"} {
		if status.Properties[f] != nil {
			t.Errorf("status.%s is in the v1alpha4 schema", f)
		}
	}
	// The hub schema is shared and must not have been changed by the derivation.
	hub, _ := model.SchemaFor("VirtualMachine")
	if hub.Properties["spec"].Properties["hardware"] == nil || hub.Properties["spec"].Properties["cdrom"] != nil {
		t.Error("deriving the v1alpha4 schema changed the hub schema")
	}
}

func TestKinds(t *testing.T) {
	ks := Kinds()
	if len(ks) == 0 || ks[0].Kind != "VirtualMachine" || ks[0].Version != Version || ks[0].APIVersion() != "vmoperator.vmware.com/v1alpha4" {
		t.Errorf("Kinds() = %+v", ks)
	}
}
