package model

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testClaim(mutate func(c *PersistentVolumeClaim)) *PersistentVolumeClaim {
	class := "my-storage-class"
	c := &PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "my-pvc", Namespace: "my-namespace"},
		Spec: PersistentVolumeClaimSpec{
			AccessModes:      []PersistentVolumeAccessMode{AccessModeReadWriteOnce},
			VolumeMode:       VolumeModeBlock,
			StorageClassName: &class,
			Resources:        &VolumeResourceRequirements{Requests: ResourceList{StorageRequest: resource.MustParse("8Gi")}},
		},
	}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func claimEnv(privileged bool) ClaimEnv {
	yes, no := true, false
	classes := map[string]*StorageClass{
		"my-storage-class": {Parameters: map[string]string{StoragePolicyIDParameter: "p"}, AllowVolumeExpansion: &yes},
		"fixed":            {Parameters: map[string]string{StoragePolicyIDParameter: "p"}, AllowVolumeExpansion: &no},
		"no-policy":        {},
	}
	return ClaimEnv{Privileged: privileged, StorageClass: func(name string) (*StorageClass, bool, error) {
		if name == "broken" {
			return nil, false, errors.New("store down")
		}
		sc, ok := classes[name]
		if ok {
			sc.Name = name
		}
		return sc, ok, nil
	}}
}

func TestDefaultPersistentVolumeClaim(t *testing.T) {
	c := testClaim(func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = "" })
	if err := DefaultPersistentVolumeClaim(c, nil); err != nil {
		t.Fatal(err)
	}
	if c.Spec.VolumeMode != VolumeModeFilesystem || len(c.Finalizers) != 1 || c.Finalizers[0] != FinalizerPVCProtection {
		t.Errorf("defaulted: volumeMode %q finalizers %v, want Filesystem and the pvc-protection finalizer", c.Spec.VolumeMode, c.Finalizers)
	}
	if err := DefaultPersistentVolumeClaim(c, nil); err != nil || len(c.Finalizers) != 1 {
		t.Errorf("defaulting twice: finalizers %v (%v), want one", c.Finalizers, err)
	}
	updated := testClaim(nil)
	if err := DefaultPersistentVolumeClaim(updated, testClaim(nil)); err != nil || len(updated.Finalizers) != 0 {
		t.Errorf("an update got finalizers %v (%v): a removed protection stays removed", updated.Finalizers, err)
	}
}

func TestValidatePersistentVolumeClaimCreate(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tt := range []struct {
		name       string
		privileged bool
		mutate     func(c *PersistentVolumeClaim)
		want       string // "" = accepted
	}{
		{name: "seed my-pvc"},
		{name: "filesystem RWO", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = VolumeModeFilesystem }},
		{name: "shared block", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.AccessModes = []PersistentVolumeAccessMode{AccessModeReadWriteMany}
		}},
		{name: "no size", mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources = nil },
			want: "spec.resources.requests[storage]: Required value"},
		{name: "zero size", mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests[StorageRequest] = resource.MustParse("0") },
			want: "spec.resources.requests[storage]: Invalid value: \"0\": must be greater than zero"},
		{name: "no class", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = nil },
			want: "spec.storageClassName: Required value"},
		{name: "missing class", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = str("nope") },
			want: `spec.storageClassName: Not found: "nope"`},
		{name: "class without policy", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = str("no-policy") },
			want: "spec.storageClassName: Invalid value: \"no-policy\": the storage class has no storagePolicyID parameter"},
		{name: "store down", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = str("broken") },
			want: "spec.storageClassName: Internal error"},
		{name: "no access mode", mutate: func(c *PersistentVolumeClaim) { c.Spec.AccessModes = nil },
			want: "spec.accessModes: Required value"},
		{name: "read only many", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.AccessModes = []PersistentVolumeAccessMode{AccessModeReadOnlyMany}
		}, want: `spec.accessModes[0]: Unsupported value: "ReadOnlyMany"`},
		{name: "shared file system", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.VolumeMode = VolumeModeFilesystem
			c.Spec.AccessModes = []PersistentVolumeAccessMode{AccessModeReadWriteOnce, AccessModeReadWriteMany}
		}, want: `spec.accessModes[1]: Invalid value: "ReadWriteMany": ReadWriteMany needs volumeMode Block`},
		{name: "volume mode", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = "Raw" },
			want: `spec.volumeMode: Unsupported value: "Raw"`},
		{name: "user binds", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeName = "v" },
			want: "spec.volumeName: Forbidden"},
		{name: "privileged registers a disk", privileged: true, mutate: func(c *PersistentVolumeClaim) {
			c.Spec.VolumeName = "v"
			c.Spec.DataSourceRef = &TypedObjectReference{APIGroup: str(GroupVMOperator), Kind: "VirtualMachine", Name: "my-vm"}
		}},
		{name: "data source for a new volume", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.DataSourceRef = &TypedObjectReference{APIGroup: str(GroupVMOperator), Kind: "VirtualMachine", Name: "my-vm"}
		}, want: "spec.dataSourceRef: Invalid value: \"my-vm\": a new volume is provisioned empty"},
		{name: "snapshot source", privileged: true, mutate: func(c *PersistentVolumeClaim) {
			c.Spec.VolumeName = "v"
			c.Spec.DataSourceRef = &TypedObjectReference{APIGroup: str("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "s"}
		}, want: `spec.dataSourceRef.kind: Unsupported value: "VolumeSnapshot"`},
		{name: "source elsewhere", privileged: true, mutate: func(c *PersistentVolumeClaim) {
			c.Spec.VolumeName = "v"
			c.Spec.DataSourceRef = &TypedObjectReference{APIGroup: str(GroupVMOperator), Kind: "VirtualMachine", Name: "vm", Namespace: str("other")}
		}, want: `spec.dataSourceRef.namespace: Invalid value: "other": must be the claim's namespace`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidatePersistentVolumeClaim(testClaim(tt.mutate), nil, claimEnv(tt.privileged))
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("errors %v, want %q", got, tt.want)
			}
		})
	}
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	bound := func(c *PersistentVolumeClaim) { c.Spec.VolumeName = "vol-1" }
	str := func(s string) *string { return &s }
	for _, tt := range []struct {
		name       string
		privileged bool
		old, new   func(c *PersistentVolumeClaim)
		want       string
	}{
		{name: "unchanged", old: bound, new: bound},
		{name: "grows", old: bound, new: func(c *PersistentVolumeClaim) {
			bound(c)
			c.Spec.Resources.Requests[StorageRequest] = resource.MustParse("12Gi")
		}},
		{name: "shrinks", old: bound, new: func(c *PersistentVolumeClaim) {
			bound(c)
			c.Spec.Resources.Requests[StorageRequest] = resource.MustParse("4Gi")
		}, want: "spec.resources.requests[storage]: Forbidden: field can not be less than previous value (8Gi)"},
		{name: "grows in a fixed class", old: func(c *PersistentVolumeClaim) { bound(c); c.Spec.StorageClassName = str("fixed") },
			new: func(c *PersistentVolumeClaim) {
				bound(c)
				c.Spec.StorageClassName = str("fixed")
				c.Spec.Resources.Requests[StorageRequest] = resource.MustParse("9Gi")
			}, want: `spec.resources.requests[storage]: Forbidden: storage class "fixed" does not allow volume expansion`},
		{name: "class changed", old: bound, new: func(c *PersistentVolumeClaim) { bound(c); c.Spec.StorageClassName = str("fixed") },
			want: `spec.storageClassName: Invalid value: "fixed": field is immutable`},
		{name: "mode changed", old: bound, new: func(c *PersistentVolumeClaim) { bound(c); c.Spec.VolumeMode = VolumeModeFilesystem },
			want: `spec.volumeMode: Invalid value: "Filesystem": field is immutable`},
		{name: "access changed", old: bound, new: func(c *PersistentVolumeClaim) {
			bound(c)
			c.Spec.AccessModes = []PersistentVolumeAccessMode{AccessModeReadWriteMany}
		}, want: "spec.accessModes: Invalid value"},
		{name: "volume dropped", old: bound, want: `spec.volumeName: Invalid value: "": field is immutable`},
		{name: "user binds", new: bound, want: `spec.volumeName: Invalid value: "vol-1": field is immutable`},
		{name: "privileged binds", privileged: true, new: bound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidatePersistentVolumeClaim(testClaim(tt.new), testClaim(tt.old), claimEnv(tt.privileged))
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("errors %v, want %q", got, tt.want)
			}
		})
	}
}
