package main

import (
	"strings"
	"testing"
	"time"
)

// TestImageDiskClaims is issue #11's acceptance for the schema upgrade: a VM from the
// multi-disk image ends with both image disks in spec.volumes as disk-<uuid> claims,
// Bound, owned by the VM, the upgrade annotations set and the registration condition
// True; the kubectl commands of the seed's Managing PVCs for Image Disks and
// Troubleshooting Registration show it; the update rules apply once the VM is upgraded;
// deleting the VM deletes those claims and their CnsRegisterVolumes and nothing else.
func TestImageDiskClaims(t *testing.T) {
	s := startStack(t)
	const ns, name = "my-namespace", "disks-vm"
	image := s.kubectl("get", "vmi", "-n", ns, "-o", `jsonpath={range .items[?(@.status.name=="multi-disk-image")]}{.metadata.name}{end}`)
	if !strings.HasPrefix(image, "vmi-") {
		t.Fatalf("no image of the multi-disk item: %q", image)
	}
	vm := "apiVersion: vmoperator.vmware.com/v1alpha5\nkind: VirtualMachine\nmetadata:\n  name: " + name +
		"\nspec:\n  className: my-vm-class\n  imageName: " + image + "\n  storageClass: my-storage-class\n  powerState: PoweredOff\n"
	if out, err := s.kubectlCtx(t.Context(), []byte(vm), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	// A claim of the namespace that is not the VM's: it stays when the VM goes.
	unrelated := "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: unrelated\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: my-storage-class\n  resources:\n    requests:\n      storage: 1Gi\n"
	if out, err := s.kubectlCtx(t.Context(), []byte(unrelated), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("apply claim: %v\n%s", err, out)
	}

	registered := `jsonpath={.status.conditions[?(@.type=="VirtualMachineUnmanagedVolumesRegistered")]}`
	waitFor(t, 3*time.Minute, "the image disks registered", func() bool {
		out, err := s.kubectlErr("get", "vm", name, "-n", ns, "-o", registered)
		return err == nil && strings.Contains(out, `"status":"True"`)
	})

	// Created (1), then back-filled with the claims named in one write (2).
	if gen := s.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath={.metadata.generation}/{.metadata.resourceVersion}"); !strings.HasPrefix(gen, "2/") {
		t.Errorf("generation/resourceVersion %s, want generation 2", gen)
	}

	// Schema Upgrades: Monitoring Upgrades and Upgrade Conditions.
	annotations := s.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath={.metadata.annotations}")
	for _, want := range []string{`"vmoperator.vmware.com/upgraded-to-build-version":"dev"`, `"vmoperator.vmware.com/upgraded-to-schema-version":"v1alpha5"`, `"vmoperator.vmware.com/upgraded-to-feature-version":"7"`} {
		if !strings.Contains(annotations, want) {
			t.Errorf("annotations lack %s: %s", want, annotations)
		}
	}
	if out := s.kubectl("get", "vm", name, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="VirtualMachineUnmanagedVolumesBackfilled")]}`); !strings.Contains(out, `"status":"True"`) {
		t.Errorf("Backfilled condition: %s", out)
	}

	// Viewing Registered PVCs.
	claims := strings.Fields(s.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath={.spec.volumes[*].persistentVolumeClaim.claimName}"))
	if len(claims) != 2 {
		t.Fatalf("claims of spec.volumes %v, want the 2 image disks'", claims)
	}
	listed := s.kubectl("get", "pvc", "-n", ns, "-l", "vm.vmoperator.vmware.com/name="+name)
	for _, c := range claims {
		if !strings.HasPrefix(c, "disk-") {
			t.Errorf("claim %s: want disk-<uuid>", c)
		}
		if row := tableRow(listed, c); !strings.Contains(row, "Bound") || !strings.Contains(row, "my-storage-class") {
			t.Errorf("get pvc -l lacks %s Bound:\n%s", c, listed)
		}
		owner := s.kubectl("get", "pvc", c, "-n", ns, "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.spec.dataSourceRef.kind}/{.metadata.annotations.cns\\.vmware\\.com\\.protected/disk-backing}")
		if owner != "VirtualMachine/"+name+"/VirtualMachine/FlatVer2BackingInfo" {
			t.Errorf("claim %s owner/dataSourceRef/backing %q", c, owner)
		}
	}
	t.Logf("kubectl get pvc -l vm.vmoperator.vmware.com/name=%s:\n%s", name, listed)
	if strings.Contains(listed, "unrelated") {
		t.Errorf("the label selector listed a claim that is not the VM's:\n%s", listed)
	}

	// Troubleshooting Registration.
	crvs := s.kubectl("get", "cnsregistervolume", "-n", ns)
	t.Logf("kubectl get cnsregistervolume:\n%s", crvs)
	for _, c := range claims {
		if row := tableRow(crvs, c); !strings.Contains(row, "true") {
			t.Errorf("get cnsregistervolume: %s not registered:\n%s", c, crvs)
		}
	}
	if out := s.kubectl("describe", "cnsregistervolume", claims[0], "-n", ns); !strings.Contains(out, "Pvc Name:") || !strings.Contains(out, "Registered:  true") {
		t.Errorf("describe cnsregistervolume:\n%s", out)
	}
	if out := s.kubectl("describe", "pvc", claims[0], "-n", ns); !strings.Contains(out, "Bound") || !strings.Contains(out, name) {
		t.Errorf("describe pvc:\n%s", out)
	}
	s.kubectl("get", "resourcequota", "-n", ns)
	if out := s.kubectl("get", "storageclass", "my-storage-class"); !strings.Contains(out, "my-storage-class") {
		t.Errorf("get storageclass:\n%s", out)
	}
	// vmop registers the disks itself: there is no CSI driver, so no pod and no logs.
	if out := s.kubectl("logs", "-n", "vmware-system-csi", "-l", "app=vsphere-csi-controller"); !strings.Contains(out, "No resources found") {
		t.Errorf("logs of the CSI controller:\n%s", out)
	}

	// Nobody but the VM service makes a CnsRegisterVolume: nothing would act on one.
	crv := "apiVersion: cns.vmware.com/v1alpha1\nkind: CnsRegisterVolume\nmetadata:\n  name: by-hand\nspec:\n  pvcName: by-hand\n  diskURLPath: ds:///vmfs/volumes/x/disk.vmdk\n"
	if out, err := s.kubectlCtx(t.Context(), []byte(crv), "apply", "-n", ns, "-f", "-"); err == nil || !strings.Contains(out, "created by the VM service") {
		t.Errorf("a CnsRegisterVolume applied by hand: %v\n%s", err, out)
	}

	// The upgrade back-filled the image's controller into spec.hardware.
	if out := s.kubectl("get", "vm", name, "-n", ns, "-o", "jsonpath={.spec.hardware.scsiControllers[*].busNumber}/{.spec.hardware.scsiControllers[*].type}"); out != "0/ParaVirtual" {
		t.Errorf("spec.hardware.scsiControllers %q, want the image's ParaVirtual on bus 0", out)
	}

	// Upgraded, the VM's update rules apply: an ordinary user may add a controller
	// (CTL-11) and may not remove an image disk (VOL-8).
	s.kubectl("--context", "user", "patch", "vm", name, "-n", ns, "--type", "json", "-p",
		`[{"op":"add","path":"/spec/hardware/scsiControllers/-","value":{"busNumber":1,"type":"ParaVirtual"}}]`)
	if out, err := s.kubectlErr("--context", "user", "patch", "vm", name, "-n", ns, "--type", "json", "-p", `[{"op":"remove","path":"/spec/volumes/1"}]`); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("removing an image disk's volume: %v\n%s", err, out)
	}

	// Removing Additional Image Disks, then Reclaiming Storage: made removable, the entry
	// goes and its disk is detached, its claim stays Bound, and deleting the claim (which
	// waits while a VM has the disk) completes.
	s.kubectl("--context", "user", "patch", "vm", name, "-n", ns, "--type", "json", "-p",
		`[{"op":"replace","path":"/spec/volumes/1/removable","value":true}]`)
	s.kubectl("--context", "user", "patch", "vm", name, "-n", ns, "--type", "json", "-p", `[{"op":"remove","path":"/spec/volumes/1"}]`)
	if row := tableRow(s.kubectl("get", "pvc", "-n", ns), claims[1]); !strings.Contains(row, "Bound") {
		t.Errorf("claim %s after its volume was removed: %q, want Bound", claims[1], row)
	}
	s.kubectl("delete", "pvc", claims[1], "-n", ns, "--timeout=55s")

	s.kubectl("delete", "vm", name, "-n", ns, "--wait=false")
	waitFor(t, 3*time.Minute, "the VM's claims and CnsRegisterVolumes gone", func() bool {
		pvcs, err1 := s.kubectlErr("get", "pvc", "-n", ns, "-l", "vm.vmoperator.vmware.com/name="+name, "-o", "name")
		regs, err2 := s.kubectlErr("get", "cnsregistervolume", "-n", ns, "-o", "name")
		return err1 == nil && err2 == nil && strings.TrimSpace(pvcs) == "" && strings.TrimSpace(regs) == ""
	})
	s.kubectl("get", "pvc", "unrelated", "-n", ns)
}

// line is the line of a kubectl table that starts with name.
func tableRow(table, name string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// The seed's Multi-Disk Image Example of Mapping spec.volumes to Image Disks, with the
// claims made beforehand ("use specific, pre-created PVCs", the class chosen "via the PVC's
// storageClassName"): the claims, of a class that binds WaitForFirstConsumer, wait for the
// VM's registration, which registers each image disk as its claim's volume; both entries
// are Classic (Volume Type in Status) and the claims are the VM's.
func TestKubectlPreCreatedImageDiskClaims(t *testing.T) {
	s := startStack(t)
	const ns = "my-namespace"
	policy := s.kubectl("get", "storageclass", "my-storage-class", "-o", "jsonpath={.parameters.storagePolicyID}")
	manifests := "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: my-storage-class-latebinding\n" +
		"provisioner: csi.vsphere.vmware.com\nvolumeBindingMode: WaitForFirstConsumer\nparameters:\n  storagePolicyID: " + policy + "\n"
	for _, claim := range []string{"my-os-pvc", "my-data-pvc"} {
		manifests += "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " + claim +
			"\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: my-storage-class-latebinding\n  resources:\n    requests:\n      storage: 1Gi\n"
	}
	if out, err := s.kubectlCtx(t.Context(), []byte(manifests), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("apply the class and claims: %v\n%s", err, out)
	}
	// The seed's example, with the class and storage class every VM names.
	vm := `apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: my-vm
spec:
  className: my-vm-class
  storageClass: my-storage-class
  imageName: multi-disk-image
  volumes:
  # Map to boot disk (SCSI 0:0)
  - name: os-disk
    controllerType: SCSI
    controllerBusNumber: 0
    unitNumber: 0
    persistentVolumeClaim:
      claimName: my-os-pvc
  # Map to data disk (SCSI 0:1)  
  - name: data-disk
    controllerType: SCSI
    controllerBusNumber: 0
    unitNumber: 1
    persistentVolumeClaim:
      claimName: my-data-pvc
`
	if out, err := s.kubectlCtx(t.Context(), []byte(vm), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("apply the VM: %v\n%s", err, out)
	}
	waitFor(t, 3*time.Minute, "the image disks registered", func() bool {
		out, err := s.kubectlErr("get", "vm", "my-vm", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="VirtualMachineUnmanagedVolumesRegistered")].status}`)
		return err == nil && out == "True"
	})
	claims := s.kubectl("get", "pvc", "-n", ns)
	t.Logf("kubectl get pvc:\n%s", claims)
	for _, claim := range []string{"my-os-pvc", "my-data-pvc"} {
		if row := tableRow(claims, claim); !strings.Contains(row, "Bound") || !strings.Contains(row, "my-storage-class-latebinding") {
			t.Errorf("claim %s: %q, want Bound in its own class", claim, row)
		}
		if owner := s.kubectl("get", "pvc", claim, "-n", ns, "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.spec.dataSourceRef.name}"); owner != "VirtualMachine/my-vm/my-vm" {
			t.Errorf("claim %s owner/dataSourceRef %q, want the VM's", claim, owner)
		}
	}
	waitFor(t, time.Minute, "both entries reported", func() bool {
		out, err := s.kubectlErr("get", "vm", "my-vm", "-n", ns, "-o", `jsonpath={range .status.volumes[*]}{.name}={.type}/{.attached} {end}`)
		return err == nil && out == "os-disk=Classic/true data-disk=Classic/true "
	})
}
