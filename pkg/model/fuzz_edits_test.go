package model

import "encoding/json"

// Byte mutations of a JSON document mostly break its syntax or an enum; they rarely make
// the one meaningful change a rule looks at. So a fuzz input also carries edits: byte
// pairs, each setting one of fuzzPaths to one of fuzzValues, which steer the fuzzer
// across the rules while it keeps mutating the bytes too.

// fuzzPaths are where rules look. A string is a map key, an int a list index.
var fuzzPaths = [][]any{
	{"metadata", "name"},
	{"metadata", "labels", "topology.kubernetes.io/zone"},
	{"metadata", "labels", "vmoperator.vmware.com/paused"},
	{"metadata", "labels", "capv.vmware.com/cluster.role"},
	{"metadata", "annotations", "vmoperator.vmware.com/restored-vm"},
	{"metadata", "annotations", "vsphere-cluster-module-group"},
	{"metadata", "annotations", "delete.check.vmoperator.vmware.com/backup"},
	{"metadata", "annotations", "vmoperator.vmware.com.protected/apply-power-state-time"},
	{"metadata", "annotations", "vmoperator.vmware.com.protected/skip-validation"},
	{"metadata", "annotations", "vmoperator.vmware.com/upgraded-to-build-version"},
	{"metadata", "annotations", "vmoperator.vmware.com/no-default-nic"},
	{"spec", "powerState"},
	{"spec", "nextRestartTime"},
	{"spec", "imageName"},
	{"spec", "image", "kind"},
	{"spec", "image", "name"},
	{"spec", "className"},
	{"spec", "storageClass"},
	{"spec", "biosUUID"},
	{"spec", "instanceUUID"},
	{"spec", "guestID"},
	{"spec", "minHardwareVersion"},
	{"spec", "currentSnapshotName"},
	{"spec", "groupName"},
	{"spec", "reserved", "resourcePolicyName"},
	{"spec", "crypto", "encryptionClassName"},
	{"spec", "advanced", "bootDiskCapacity"},
	{"spec", "network", "disabled"},
	{"spec", "network", "hostName"},
	{"spec", "network", "domainName"},
	{"spec", "network", "nameservers"},
	{"spec", "network", "interfaces", 0, "name"},
	{"spec", "network", "interfaces", 0, "addresses"},
	{"spec", "network", "interfaces", 0, "gateway4"},
	{"spec", "network", "interfaces", 0, "gateway6"},
	{"spec", "network", "interfaces", 0, "dhcp4"},
	{"spec", "network", "interfaces", 0, "macAddr"},
	{"spec", "network", "interfaces", 0, "mtu"},
	{"spec", "network", "interfaces", 1},
	{"spec", "volumes", 0, "name"},
	{"spec", "volumes", 0, "persistentVolumeClaim", "claimName"},
	{"spec", "volumes", 0, "controllerType"},
	{"spec", "volumes", 0, "controllerBusNumber"},
	{"spec", "volumes", 0, "unitNumber"},
	{"spec", "volumes", 0, "applicationType"},
	{"spec", "volumes", 0, "sharingMode"},
	{"spec", "volumes", 1},
	{"spec", "hardware", "cdrom", 0, "name"},
	{"spec", "hardware", "cdrom", 0, "image", "name"},
	{"spec", "hardware", "cdrom", 0, "controllerType"},
	{"spec", "hardware", "cdrom", 0, "controllerBusNumber"},
	{"spec", "hardware", "cdrom", 0, "unitNumber"},
	{"spec", "hardware", "scsiControllers", 0, "busNumber"},
	{"spec", "hardware", "scsiControllers", 0, "sharingMode"},
	{"spec", "hardware", "ideControllers"},
	{"spec", "bootOptions", "firmware"},
	{"spec", "bootOptions", "efiSecureBoot"},
	{"spec", "bootOptions", "bootRetryDelay"},
	{"spec", "bootOptions", "bootOrder"},
	{"spec", "readinessProbe", "tcpSocket", "port"},
	{"spec", "readinessProbe", "guestHeartbeat"},
	{"spec", "bootstrap", "cloudInit", "instanceID"},
	{"spec", "bootstrap", "linuxPrep"},
	{"spec", "affinity", "vmAffinity"},
}

// fuzzValues are what the edits write; nil removes the member.
var fuzzValues = []any{
	nil, "", "now", "PoweredOn", "PoweredOff", "Suspended",
	0, 1, 2, 3, 7, 13, 22, 23, 30, 64, -1, true, false,
	"SCSI", "IDE", "SATA", "NVME", "None", "Physical", "MultiWriter", "OracleRAC", "MicrosoftWSFC",
	"10.0.0.1", "10.0.0.5/24", "fd00::1", "fd00::5/64", "default", "00:50:56:00:00:01",
	"efi", "bios", "Enabled", "10s", "zone-a", "zone-z", "devops",
	"my-vm", "eth0", "eth1", "data", "data-pvc", "cd1", "photon-5", "vmi-cccc", "vmi-0a0044d7c690bcbea",
	"VirtualMachineImage", "ClusterVirtualMachineImage", "my-vm-class", "my-storage-class",
	"my-encrypted-storage-class", "my-encryption-class", "windows2019srv_64Guest",
	"1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11", "v-fuzz", "2025-06-01T12:00:00.5Z", "1Mi", "1537Ki",
	"a-host-name-longer-than-fifteen", "example.com",
	[]any{}, []any{"10.0.0.2"}, map[string]any{},
	map[string]any{"name": "eth1"},
	map[string]any{"name": "data2", "persistentVolumeClaim": map[string]any{"claimName": "shared-pvc"}},
	[]any{map[string]any{"type": "Network", "name": "eth0"}},
	[]any{map[string]any{"busNumber": 0}},
	map[string]any{"requiredDuringSchedulingPreferredDuringExecution": []any{map[string]any{
		"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "db"}}, "topologyKey": "topology.kubernetes.io/zone"}}},
}

// applyFuzzEdits returns doc with the edits applied, or doc unchanged when it is not a
// JSON object or there are no edits.
func applyFuzzEdits(doc, edits []byte) []byte {
	if len(edits) < 2 {
		return doc
	}
	var obj map[string]any
	if json.Unmarshal(doc, &obj) != nil || obj == nil {
		return doc
	}
	for i := 0; i+1 < len(edits); i += 2 {
		setPath(obj, fuzzPaths[int(edits[i])%len(fuzzPaths)], fuzzValues[int(edits[i+1])%len(fuzzValues)])
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return doc
	}
	return out
}

// setPath returns node with the member at path set to v (removed when v is nil),
// creating maps and list items on the way; an index past a list's end appends.
func setPath(node any, path []any, v any) any {
	if len(path) == 0 {
		return deepCopyJSON(v)
	}
	switch step := path[0].(type) {
	case string:
		m, _ := node.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		if len(path) == 1 && v == nil {
			delete(m, step)
			return m
		}
		m[step] = setPath(m[step], path[1:], v)
		return m
	case int:
		l, _ := node.([]any)
		if step >= len(l) {
			l = append(l, nil)
			step = len(l) - 1
		}
		if len(path) == 1 && v == nil {
			return append(l[:step:step], l[step+1:]...)
		}
		l[step] = setPath(l[step], path[1:], v)
		return l
	}
	return node
}
