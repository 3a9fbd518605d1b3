package model

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmop/vmop/pkg/model/internal/schemagen/structural"
)

func TestGeneratedSchemasAreCurrent(t *testing.T) {
	got, err := structural.Generate(".")
	if err != nil {
		t.Fatalf("generate schemas: %v", err)
	}
	if string(got) != string(generatedSchemas) {
		t.Errorf("zz_generated.schema.json is stale: run `go generate ./model` in pkg")
	}
}

func TestSchemasCoverEveryKind(t *testing.T) {
	all, err := loadSchemas()
	if err != nil {
		t.Fatalf("load schemas: %v", err)
	}
	var kinds, schemas []string
	for _, k := range Kinds() {
		kinds = append(kinds, k.Kind)
	}
	for k := range all {
		schemas = append(schemas, k)
	}
	sort.Strings(kinds)
	sort.Strings(schemas)
	if diff := cmp.Diff(kinds, schemas); diff != "" {
		t.Errorf("schema kinds differ from Kinds() (-kinds +schemas):\n%s", diff)
	}
	for _, k := range Kinds() {
		s, ok := SchemaFor(k.Kind)
		if !ok {
			continue
		}
		for _, p := range []string{"apiVersion", "kind", "metadata"} {
			if s.Properties[p] == nil {
				t.Errorf("%s schema has no %s", k.Kind, p)
			}
		}
		if k.HasStatus && s.Properties["status"] == nil {
			t.Errorf("%s has a status subresource but its schema has no status", k.Kind)
		}
	}
}

// validVM uses most of the schema's constructs; every case below changes one thing.
const validVM = `{
  "apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
  "metadata": {"name": "web-1", "namespace": "dev", "labels": {"app": "web"}, "annotations": {"a": "b"},
    "creationTimestamp": "2024-05-01T10:00:00Z", "finalizers": ["vmoperator.vmware.com/virtualmachine"]},
  "spec": {
    "className": "best-effort-small", "imageName": "vmi-0123456789abcdef0",
    "image": {"kind": "VirtualMachineImage", "name": "vmi-0123456789abcdef0"},
    "storageClass": "wcpglobal", "powerState": "PoweredOn",
    "powerOffMode": "TrySoft", "suspendMode": "TrySoft", "restartMode": "TrySoft", "promoteDisksMode": "Online",
    "minHardwareVersion": 15,
    "instanceUUID": "6f1c6a2e-0f6b-4f4e-9b9e-1d2c3b4a5f60", "biosUUID": "0d7f2f9e-5a3b-4c1d-8e2f-3a4b5c6d7e8f",
    "network": {"interfaces": [{"name": "eth0", "network": {"name": "VM Network"}, "macAddr": "00:50:56:aa:bb:cc",
      "guestDeviceName": "ens192", "routes": [{"to": "0.0.0.0/0", "via": "10.0.0.1", "metric": 1}]}]},
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-pvc"}, "removable": true}],
    "hardware": {
      "cdrom": [{"name": "cdrom1", "image": {"kind": "VirtualMachineImage", "name": "vmi-iso"}, "connected": true, "allowGuestControl": true}],
      "ideControllers": [{"busNumber": 0}, {"busNumber": 1}],
      "scsiControllers": [{"busNumber": 0, "type": "ParaVirtual", "sharingMode": "None"}]},
    "advanced": {"bootDiskCapacity": "20Gi"},
    "readinessProbe": {"tcpSocket": {"port": 22}, "timeoutSeconds": 10, "periodSeconds": 10},
    "bootOptions": {"firmware": "efi", "bootRetry": "Disabled", "efiSecureBoot": "Disabled", "networkBootProtocol": "IP4", "bootDelay": "10s"},
    "crypto": {"encryptionClassName": "my-enc", "useDefaultKeyProvider": true, "vTPMMode": "New"},
    "bootstrap": {"cloudInit": {"cloudConfig": {"users": [{"name": "ubuntu"}], "runcmd": ["ls", ["echo", "hi"]],
      "write_files": [{"path": "/etc/x", "content": "hi", "owner": "root:root", "permissions": "0644", "encoding": "text/plain"}]}}}
  },
  "status": {"powerState": "PoweredOn",
    "conditions": [{"type": "Ready", "status": "True", "reason": "True", "message": "", "lastTransitionTime": "2024-05-01T10:00:00Z"}],
    "volumes": [{"name": "disk", "type": "Classic", "used": "1Gi"}, {"name": "disk", "type": "Managed"}]}
}`

func vmWith(t *testing.T, change func(vm map[string]any)) map[string]any {
	t.Helper()
	vm := decode(t, validVM)
	change(vm)
	return vm
}

// set assigns v at a path of object keys and list indexes below obj.
func set(obj map[string]any, v any, path ...any) {
	var cur any = obj
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[k] = v
				return
			}
			cur = m[k]
		case int:
			l := cur.([]any)
			if last {
				l[k] = v
				return
			}
			cur = l[k]
		}
	}
}

func TestCheckSchemaVirtualMachine(t *testing.T) {
	tests := []struct {
		name        string
		change      func(vm map[string]any)
		wantErrs    []string
		wantUnknown []string
	}{
		{"valid", func(map[string]any) {}, nil, nil},
		{"power state enum", func(vm map[string]any) { set(vm, "On", "spec", "powerState") },
			[]string{`spec.powerState: Unsupported value: "On": supported values: "PoweredOn", "PoweredOff", "Suspended", ""`}, nil},
		{"power-off mode enum", func(vm map[string]any) { set(vm, "Gentle", "spec", "powerOffMode") },
			[]string{`spec.powerOffMode: Unsupported value: "Gentle": supported values: "Hard", "Soft", "TrySoft"`}, nil},
		{"hardware version minimum", func(vm map[string]any) { set(vm, 12.0, "spec", "minHardwareVersion") },
			[]string{`spec.minHardwareVersion: Invalid value: 12: must be greater than or equal to 13`}, nil},
		{"hardware version type", func(vm map[string]any) { set(vm, "15", "spec", "minHardwareVersion") },
			[]string{`spec.minHardwareVersion: Invalid value: "string": must be of type integer`}, nil},
		{"hardware version int32", func(vm map[string]any) { set(vm, 4294967296.0, "spec", "minHardwareVersion") },
			[]string{`spec.minHardwareVersion: Invalid value: 4294967296: must fit in a 32-bit signed integer`}, nil},
		{"interface name pattern", func(vm map[string]any) { set(vm, "Eth_0", "spec", "network", "interfaces", 0, "name") },
			[]string{`spec.network.interfaces[0].name: Invalid value: "Eth_0": must match '^[a-z0-9]{2,}$'`}, nil},
		{"mac address pattern", func(vm map[string]any) { set(vm, "00:50:56", "spec", "network", "interfaces", 0, "macAddr") },
			[]string{`spec.network.interfaces[0].macAddr: Invalid value: "00:50:56": must match '^([0-9A-Fa-f]{2}:){5}([0-9A-Fa-f]{2})$'`}, nil},
		{"route metric minimum", func(vm map[string]any) {
			set(vm, 0.0, "spec", "network", "interfaces", 0, "routes", 0, "metric")
		}, []string{`spec.network.interfaces[0].routes[0].metric: Invalid value: 0: must be greater than or equal to 1`}, nil},
		{"too many interfaces", func(vm map[string]any) {
			var nics []any
			for _, n := range []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b0"} {
				nics = append(nics, map[string]any{"name": n})
			}
			set(vm, nics, "spec", "network", "interfaces")
		}, []string{`spec.network.interfaces: Too many: 11: must have at most 10 items`}, nil},
		{"volume name duplicate", func(vm map[string]any) {
			set(vm, []any{
				map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "a"}},
				map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "b"}},
			}, "spec", "volumes")
		}, []string{`spec.volumes[1].name: Duplicate value: "data"`}, nil},
		{"volume without name", func(vm map[string]any) { set(vm, []any{map[string]any{"removable": false}}, "spec", "volumes") },
			[]string{`spec.volumes[0].name: Required value`}, nil},
		{"ide bus duplicate and range", func(vm map[string]any) {
			set(vm, []any{map[string]any{"busNumber": 1.0}, map[string]any{"busNumber": 1.0}, map[string]any{"busNumber": 2.0}}, "spec", "hardware", "ideControllers")
		}, []string{
			`spec.hardware.ideControllers: Too many: 3: must have at most 2 items`,
			`spec.hardware.ideControllers[2].busNumber: Invalid value: 2: must be less than or equal to 1`,
			`spec.hardware.ideControllers[1].busNumber: Duplicate value: 1`,
		}, nil},
		{"status volumes keyed by name and type", func(vm map[string]any) {
			set(vm, []any{map[string]any{"name": "disk", "type": "Classic"}, map[string]any{"name": "disk", "type": "Classic"}}, "status", "volumes")
		}, []string{`status.volumes[1]: Duplicate value: "disk/Classic"`}, nil},
		{"status volume type defaults to Managed for the key", func(vm map[string]any) {
			set(vm, []any{map[string]any{"name": "disk", "type": "Managed"}, map[string]any{"name": "disk"}}, "status", "volumes")
		}, []string{`status.volumes[1]: Duplicate value: "disk/Managed"`}, nil},
		{"uuid format", func(vm map[string]any) { set(vm, "1234", "spec", "biosUUID") },
			[]string{`spec.biosUUID: Invalid value: "1234": must be a UUID`}, nil},
		{"quantity", func(vm map[string]any) { set(vm, "20 GB", "spec", "advanced", "bootDiskCapacity") },
			[]string{`spec.advanced.bootDiskCapacity: Invalid value: "20 GB": must be a quantity, e.g. 10Gi or 500m`}, nil},
		{"quantity as integer", func(vm map[string]any) { set(vm, 21474836480.0, "spec", "advanced", "bootDiskCapacity") }, nil, nil},
		{"probe timeout maximum", func(vm map[string]any) { set(vm, 61.0, "spec", "readinessProbe", "timeoutSeconds") },
			[]string{`spec.readinessProbe.timeoutSeconds: Invalid value: 61: must be less than or equal to 60`}, nil},
		{"probe timeout minimum", func(vm map[string]any) { set(vm, 0.0, "spec", "readinessProbe", "timeoutSeconds") },
			[]string{`spec.readinessProbe.timeoutSeconds: Invalid value: 0: must be greater than or equal to 1`}, nil},
		{"probe timeout and period of a second", func(vm map[string]any) {
			set(vm, 1.0, "spec", "readinessProbe", "timeoutSeconds")
			set(vm, 1.0, "spec", "readinessProbe", "periodSeconds")
		}, nil, nil},
		{"probe timeout of a minute", func(vm map[string]any) { set(vm, 60.0, "spec", "readinessProbe", "timeoutSeconds") }, nil, nil},
		{"probe period minimum", func(vm map[string]any) { set(vm, 0.0, "spec", "readinessProbe", "periodSeconds") },
			[]string{`spec.readinessProbe.periodSeconds: Invalid value: 0: must be greater than or equal to 1`}, nil},
		{"probe period negative", func(vm map[string]any) { set(vm, -10.0, "spec", "readinessProbe", "periodSeconds") },
			[]string{`spec.readinessProbe.periodSeconds: Invalid value: -10: must be greater than or equal to 1`}, nil},
		// VM Operator bounds the period only from below: a long period holds no worker.
		{"probe period without maximum", func(vm map[string]any) { set(vm, 3600.0, "spec", "readinessProbe", "periodSeconds") }, nil, nil},
		{"image name required", func(vm map[string]any) { set(vm, map[string]any{"kind": "VirtualMachineImage"}, "spec", "image") },
			[]string{`spec.image.name: Required value`}, nil},
		{"condition reason pattern", func(vm map[string]any) { set(vm, "not ok", "status", "conditions", 0, "reason") },
			[]string{`status.conditions[0].reason: Invalid value: "not ok": must match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'`}, nil},
		{"label value type", func(vm map[string]any) { set(vm, 1.0, "metadata", "labels", "app") },
			[]string{`metadata.labels[app]: Invalid value: "integer": must be of type string`}, nil},
		{"creation timestamp null is dropped", func(vm map[string]any) { set(vm, nil, "metadata", "creationTimestamp") }, nil, nil},
		{"creation timestamp format", func(vm map[string]any) { set(vm, "May 1st", "metadata", "creationTimestamp") },
			[]string{`metadata.creationTimestamp: Invalid value: "May 1st": must be an RFC 3339 date-time`}, nil},
		{"unknown spec field", func(vm map[string]any) { set(vm, "x", "spec", "foo") }, nil, []string{"spec.foo"}},
		{"unknown fields in several places", func(vm map[string]any) {
			set(vm, 1.0, "spec", "network", "interfaces", 0, "vlan")
			set(vm, true, "metadata", "selfLink")
			set(vm, "x", "zzz")
		}, nil, []string{"metadata.selfLink", "spec.network.interfaces[0].vlan", "zzz"}},
		{"cloud-config runcmd keeps anything", func(vm map[string]any) {
			set(vm, []any{map[string]any{"weird": 1.0}}, "spec", "bootstrap", "cloudInit", "cloudConfig", "runcmd")
		}, nil, nil},
		{"errors and unknowns together", func(vm map[string]any) {
			set(vm, "Off", "spec", "powerState")
			set(vm, 1.0, "spec", "zone")
		}, []string{`spec.powerState: Unsupported value: "Off": supported values: "PoweredOn", "PoweredOff", "Suspended", ""`}, []string{"spec.zone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := vmWith(t, tt.change)
			unknown, errs := CheckSchema("VirtualMachine", vm)
			if diff := cmp.Diff(tt.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUnknown, unknown); diff != "" {
				t.Errorf("unknown mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckSchemaPrunesUnknownVMFields(t *testing.T) {
	vm := vmWith(t, func(vm map[string]any) {
		set(vm, "x", "spec", "foo")
		set(vm, 1.0, "spec", "network", "interfaces", 0, "vlan")
	})
	if _, errs := CheckSchema("VirtualMachine", vm); len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if diff := cmp.Diff(decode(t, validVM), vm); diff != "" {
		t.Errorf("pruned VM differs from the valid VM (-want +got):\n%s", diff)
	}
}

func TestApplyDefaultsVirtualMachine(t *testing.T) {
	vm := decode(t, `{"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
	  "metadata": {"name": "a"},
	  "spec": {"className": "c", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "p"}}],
	    "bootOptions": {}, "hardware": {"cdrom": [{"name": "cd", "image": {"name": "iso"}}], "scsiControllers": [{"busNumber": 0}]},
	    "bootstrap": {"linuxPrep": {"password": {"name": "s"}},
	      "cloudInit": {"cloudConfig": {"write_files": [{"path": "/etc/x"}]}}}}}`)
	ApplyDefaults("VirtualMachine", vm)
	want := decode(t, `{"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
	  "metadata": {"name": "a"},
	  "spec": {"className": "c", "powerOffMode": "TrySoft", "suspendMode": "TrySoft", "restartMode": "TrySoft", "promoteDisksMode": "Online",
	    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "p"}, "removable": true}],
	    "bootOptions": {"bootRetry": "Disabled", "efiSecureBoot": "Disabled", "networkBootProtocol": "IP4"},
	    "hardware": {"cdrom": [{"name": "cd", "image": {"name": "iso"}, "connected": true, "allowGuestControl": true}],
	      "scsiControllers": [{"busNumber": 0, "sharingMode": "None", "type": "ParaVirtual"}]},
	    "bootstrap": {"linuxPrep": {"password": {"name": "s", "key": "password"}},
	      "cloudInit": {"cloudConfig": {"write_files": [{"path": "/etc/x", "owner": "root:root", "permissions": "0644", "encoding": "text/plain"}]}}}}}`)
	if diff := cmp.Diff(want, vm); diff != "" {
		t.Errorf("defaulted VM mismatch (-want +got):\n%s", diff)
	}
	// crypto, readinessProbe and status were absent: defaulting must not create them.
	spec := vm["spec"].(map[string]any)
	for _, parent := range []string{"crypto", "readinessProbe"} {
		if _, ok := spec[parent]; ok {
			t.Errorf("ApplyDefaults created spec.%s", parent)
		}
	}
}

func TestApplyDefaultsOutputPassesCheck(t *testing.T) {
	vm := decode(t, `{"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine", "metadata": {"name": "a"},
	  "spec": {"crypto": {}, "readinessProbe": {"guestHeartbeat": {}}, "bootOptions": {}}}`)
	ApplyDefaults("VirtualMachine", vm)
	if _, errs := CheckSchema("VirtualMachine", vm); len(errs) > 0 {
		t.Errorf("defaulted VM fails the schema: %v", errs)
	}
	spec := vm["spec"].(map[string]any)
	if got := spec["crypto"]; !cmp.Equal(got, map[string]any{"useDefaultKeyProvider": true, "vTPMMode": "New"}) {
		t.Errorf("spec.crypto = %v, want the crypto defaults", got)
	}
	if got := spec["readinessProbe"].(map[string]any)["guestHeartbeat"]; !cmp.Equal(got, map[string]any{"thresholdStatus": "green"}) {
		t.Errorf("spec.readinessProbe.guestHeartbeat = %v, want thresholdStatus green", got)
	}
}

func TestEveryDefaultPassesItsSchema(t *testing.T) {
	for _, k := range Kinds() {
		s, ok := SchemaFor(k.Kind)
		if !ok {
			t.Fatalf("no schema for %s", k.Kind)
		}
		walkSchemas(s, k.Kind, func(path string, s *Schema) {
			if s.defaultValue == nil {
				return
			}
			c := &checker{}
			c.value(s, deepCopyJSON(s.defaultValue), nil)
			if len(c.errs) > 0 {
				t.Errorf("%s: default %v fails its own schema: %v", path, s.defaultValue, c.errs)
			}
		})
	}
}

func walkSchemas(s *Schema, path string, fn func(string, *Schema)) {
	fn(path, s)
	for name, p := range s.Properties {
		walkSchemas(p, path+"."+name, fn)
	}
	if s.Items != nil {
		walkSchemas(s.Items, path+"[]", fn)
	}
	if s.AdditionalProperties != nil {
		walkSchemas(s.AdditionalProperties, path+"{}", fn)
	}
}

func TestSchemaJSONRoundTrip(t *testing.T) {
	s, ok := SchemaFor("VirtualMachine")
	if !ok {
		t.Fatal("no VirtualMachine schema")
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	var all map[string]any
	if err := json.Unmarshal(generatedSchemas, &all); err != nil {
		t.Fatal(err)
	}
	want = all["VirtualMachine"].(map[string]any)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema does not round-trip the generated JSON (-want +got):\n%s", diff)
	}
}

func BenchmarkCheckSchemaVirtualMachine(b *testing.B) {
	var vm map[string]any
	if err := json.Unmarshal([]byte(validVM), &vm); err != nil {
		b.Fatal(err)
	}
	// A valid object is not modified by the check, so one copy serves every iteration.
	for b.Loop() {
		if _, errs := CheckSchema("VirtualMachine", vm); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
