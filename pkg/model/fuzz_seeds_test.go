package model

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// fuzzSeedDocuments are the seed document's VirtualMachine examples (whole objects and
// fragments) as v1alpha5 JSON, plus a few handmade ones that reach deeper rules.
func fuzzSeedDocuments(tb testing.TB) [][]byte {
	tb.Helper()
	var docs [][]byte
	for _, ex := range seedExamples(tb) {
		var doc map[string]any
		if err := yaml.Unmarshal(ex.yaml, &doc); err != nil || doc == nil {
			continue
		}
		if doc["kind"] != "VirtualMachine" && seedFragments[ex.ordinal] != "VirtualMachine" {
			continue
		}
		if e, ok := seedExceptions[ex.ordinal]; ok {
			e.fix(doc)
		}
		doc["apiVersion"], doc["kind"] = "vmoperator.vmware.com/v1alpha5", "VirtualMachine"
		if doc["metadata"] == nil {
			doc["metadata"] = map[string]any{"name": "my-vm"}
		}
		// A fragment shows one part; the rest comes from vm-example so the chain gets past
		// the required fields.
		spec, _ := doc["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			doc["spec"] = spec
		}
		for k, v := range map[string]any{"className": "my-vm-class", "imageName": "vmi-0a0044d7c690bcbea", "storageClass": "my-storage-class"} {
			if spec[k] == nil && (k != "imageName" || spec["image"] == nil) {
				spec[k] = v
			}
		}
		data, err := json.Marshal(doc)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, data)
	}
	if len(docs) == 0 {
		tb.Fatal("the seed document has no VirtualMachine example")
	}
	for _, doc := range handmadeFuzzDocuments {
		docs = append(docs, []byte(doc))
	}
	return docs
}

// handmadeFuzzDocuments reach rules the seed's examples do not: network details,
// bootstrap providers, volumes, CD-ROMs and controllers, probes, annotations, and an
// upgraded VM.
var handmadeFuzzDocuments = []string{
	vmDoc("enc-1", `{}`, `"storageClass":"my-encrypted-storage-class"`),
	vmDoc("web-1", `{"labels":{"topology.kubernetes.io/zone":"zone-a"},"annotations":{"vmoperator.vmware.com/cloudinit-type":"guestinfo"}}`,
		`"powerState":"PoweredOff","network":{"hostName":"web-1","domainName":"example.com","nameservers":["10.0.0.2"],"searchDomains":["example.com"],`+
			`"interfaces":[{"name":"eth0","guestDeviceName":"ens192","mtu":1500,"addresses":["10.0.0.10/24","fd00::10/64"],"gateway4":"10.0.0.1","gateway6":"fd00::1",`+
			`"nameservers":["10.0.0.3"],"routes":[{"to":"default","via":"10.0.0.1","metric":10},{"to":"192.168.0.0/16","via":"10.0.0.254"}]},{"name":"eth1","dhcp4":true,"dhcp6":true}]},`+
			`"bootstrap":{"cloudInit":{"cloudConfig":{"runcmd":["ls",["echo","hi"]],"write_files":[{"path":"/etc/motd","content":"hello"},{"path":"/etc/key","content":{"name":"s","key":"k"}}]},"sshAuthorizedKeys":["ssh-ed25519 AAAA"]}}`),
	vmDoc("db-1", `{"annotations":{"poweron.check.vmoperator.vmware.com/backup":"wait","vmoperator.vmware.com.protected/apply-power-state-time":"2025-06-01T12:00:00.5Z"}}`,
		`"image":{"kind":"ClusterVirtualMachineImage","name":"vmi-cccc"},"imageName":"ubuntu-24.04","guestID":"ubuntu64Guest",`+
			`"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-pvc"},"applicationType":"OracleRAC"},{"name":"logs","persistentVolumeClaim":{"claimName":"logs-pvc"},"controllerType":"SCSI","controllerBusNumber":0,"unitNumber":3}],`+
			`"hardware":{"cdrom":[{"name":"cd1","image":{"name":"vmi-0a0044d7c690bcbea"},"connected":false}],"scsiControllers":[{"busNumber":0}]},`+
			`"bootOptions":{"firmware":"efi","efiSecureBoot":"Enabled","bootDelay":"5s","bootRetry":"Enabled","bootRetryDelay":"10s"},"readinessProbe":{"tcpSocket":{"port":22},"timeoutSeconds":10},`+
			`"groupName":"db","affinity":{"vmAntiAffinity":{"preferredDuringSchedulingPreferredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"kubernetes.io/hostname"}]}}`),
	vmDoc("win-1", `{}`, `"guestID":"windows2019srv_64Guest","minHardwareVersion":17,"network":{"domainName":"corp.example.com","nameservers":["10.0.0.2"]},`+
		`"bootstrap":{"sysprep":{"sysprep":{"guiUnattended":{"autoLogon":true,"autoLogonCount":1,"password":{"name":"pw"}},"userData":{"fullName":"Ops","orgName":"Example"},`+
		`"identification":{"domainAdmin":"admin","domainAdminPassword":{"name":"dpw"}}}}},"advanced":{"bootDiskCapacity":"20Gi","changeBlockTracking":true,"defaultVolumeProvisioningMode":"Thin"},`+
		`"readinessProbe":{"guestInfo":[{"key":"ready","value":"true"}]}`),
	vmDoc("lin-1", `{"annotations":{"vmoperator.vmware.com/no-default-nic":""}}`, `"network":{"disabled":true},`+
		`"bootstrap":{"linuxPrep":{"hardwareClockIsUTC":true,"timeZone":"Europe/Paris"},"vAppConfig":{"properties":[{"key":"a","value":{"value":"1"}},{"key":"b","value":{"from":{"name":"s","key":"k"}}}]}},`+
		`"readinessProbe":{"guestHeartbeat":{}},"promoteDisksMode":"Disabled","nextRestartTime":""`),
	// A VM created already upgraded, which only an upgrade-exempt caller can do: its
	// updates run placement (D18/D19). The fuzzer's first find: create placed nothing,
	// so the first update placed the volumes and VOL-10 refused that as a change.
	vmDoc("upg-1", `{"annotations":{"vmoperator.vmware.com/upgraded-to-build-version":"v-fuzz","vmoperator.vmware.com/upgraded-to-schema-version":"v1alpha5","vmoperator.vmware.com/upgraded-to-feature-version":"7"}}`,
		`"biosUUID":"1b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11","instanceUUID":"2b1e1a2c-4e59-4b7b-a9f1-0f6b5a0c9d11","guestID":"ubuntu64Guest",`+
			`"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-pvc"}},{"name":"shared","persistentVolumeClaim":{"claimName":"shared-pvc"},"applicationType":"MicrosoftWSFC"}],`+
			`"hardware":{"cdrom":[{"name":"cd1","image":{"name":"vmi-0a0044d7c690bcbea"}},{"name":"cd2","image":{"kind":"ClusterVirtualMachineImage","name":"vmi-cccc"},"controllerType":"SATA","controllerBusNumber":0}],"nvmeControllers":[{"busNumber":0}]}`),
}

// vmDoc is a VirtualMachine of the fuzz namespace's inventory: meta is the metadata
// object without the name, spec more spec members (or none).
func vmDoc(name, meta, spec string) string {
	meta = strings.Replace(meta, "{", `{"name":"`+name+`",`, 1)
	meta = strings.Replace(meta, ",}", "}", 1)
	if spec != "" && !strings.HasPrefix(spec, `"storageClass"`) {
		spec = `"storageClass":"my-storage-class",` + spec
	}
	if !strings.Contains(spec, `"image`) {
		spec = `"imageName":"photon-5",` + spec
	}
	return `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine","metadata":` + meta +
		`,"spec":{"className":"my-vm-class",` + spec + `}}`
}
