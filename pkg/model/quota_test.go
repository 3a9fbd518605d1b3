package model

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// The seed's Storage Quota Reservation: an image disk that is 2Gi in size but can grow to
// 100Gi reserves 100Gi, and with 50Gi free in a 500Gi quota the VM is refused.
func TestSeedStorageQuotaReservation(t *testing.T) {
	img := &VirtualMachineImageStatus{Disks: []VirtualMachineImageDiskInfo{{Name: "disk-0", Limit: qty("100Gi"), Requested: qty("2Gi")}}}
	vm := &VirtualMachine{Spec: VirtualMachineSpec{StorageClass: "my-storage-class"}}
	charge := VMStorageCharge(vm, img)
	if got := charge.Storage.String(); got != "100Gi" {
		t.Fatalf("charge = %s, want 100Gi", got)
	}
	hard := ResourceList{ResourceRequestsStorage: resource.MustParse("500Gi")}
	used := ResourceList{ResourceRequestsStorage: resource.MustParse("450Gi")}
	got := ExceededQuota("my-quota", hard, used, ChargeDelta(nil, charge))
	want := "exceeded quota: my-quota, requested: requests.storage=100Gi, used: requests.storage=450Gi, limited: requests.storage=500Gi"
	if got != want {
		t.Errorf("ExceededQuota =\n%q, want\n%q", got, want)
	}
	small := VMStorageCharge(vm, &VirtualMachineImageStatus{Disks: []VirtualMachineImageDiskInfo{{Name: "disk-0", Limit: qty("50Gi")}}})
	if got := ExceededQuota("my-quota", hard, used, ChargeDelta(nil, small)); got != "" {
		t.Errorf("a VM that fits exactly: %q, want room", got)
	}
}

func TestStorageCharges(t *testing.T) {
	gold := "gold"
	tests := []struct {
		name   string
		charge StorageCharge
		want   string
	}{
		{"image disks without a limit count their size", VMStorageCharge(&VirtualMachine{},
			&VirtualMachineImageStatus{Disks: []VirtualMachineImageDiskInfo{{Limit: qty("20Gi")}, {Requested: qty("1Gi")}}}), "21Gi"},
		{"a reported total replaces the reservation", VMStorageCharge(&VirtualMachine{Status: VirtualMachineStatus{
			Storage: &VirtualMachineStorageStatus{Total: qty("16Gi")}}},
			&VirtualMachineImageStatus{Disks: []VirtualMachineImageDiskInfo{{Limit: qty("100Gi")}}}), "16Gi"},
		{"an unknown image charges nothing", VMStorageCharge(&VirtualMachine{}, nil), "0"},
		{"a claim charges its request", ClaimStorageCharge(&PersistentVolumeClaim{Spec: PersistentVolumeClaimSpec{
			StorageClassName: &gold, Resources: &VolumeResourceRequirements{Requests: ResourceList{"storage": resource.MustParse("8Gi")}}}}), "8Gi"},
		{"a claim without a request charges nothing", ClaimStorageCharge(&PersistentVolumeClaim{}), "0"},
	}
	for _, tt := range tests {
		if got := tt.charge.Storage.String(); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Usage counts each charge against requests.storage and its class's resource, and only
// against the resources the quota limits.
func TestQuotaUsage(t *testing.T) {
	hard := ResourceList{
		ResourceRequestsStorage:             resource.MustParse("100Gi"),
		StorageClassRequestsStorage("gold"): resource.MustParse("10Gi"),
	}
	used := QuotaUsage(hard, []StorageCharge{
		{StorageClass: "gold", Storage: resource.MustParse("8Gi")},
		{StorageClass: "silver", Storage: resource.MustParse("20Gi")},
		{Storage: resource.MustParse("1Gi")},
	})
	want := map[string]string{ResourceRequestsStorage: "29Gi", StorageClassRequestsStorage("gold"): "8Gi"}
	if len(used) != len(want) {
		t.Fatalf("used = %v, want %v", used, want)
	}
	for res, w := range want {
		if q := used[res]; q.String() != w {
			t.Errorf("used[%s] = %s, want %s", res, q.String(), w)
		}
	}
	if got := QuotaUsage(hard, nil)[ResourceRequestsStorage]; got.String() != "0" {
		t.Errorf("nothing charged: used %s, want 0", got.String())
	}
	// A per-class limit is exceeded on its own, named alone.
	delta := ChargeDelta(nil, StorageCharge{StorageClass: "gold", Storage: resource.MustParse("4Gi")})
	got := ExceededQuota("q", hard, used, delta)
	want1 := "exceeded quota: q, requested: gold.storageclass.storage.k8s.io/requests.storage=4Gi, used: gold.storageclass.storage.k8s.io/requests.storage=8Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=10Gi"
	if got != want1 {
		t.Errorf("ExceededQuota =\n%q, want\n%q", got, want1)
	}
}

// An update charges only what it adds: a grown claim its growth, a shrunk one nothing.
func TestChargeDelta(t *testing.T) {
	old := StorageCharge{StorageClass: "gold", Storage: resource.MustParse("8Gi")}
	grown := ChargeDelta(&old, StorageCharge{StorageClass: "gold", Storage: resource.MustParse("12Gi")})
	if q := grown[ResourceRequestsStorage]; q.String() != "4Gi" || len(grown) != 2 {
		t.Errorf("grown: %v, want 4Gi on both resources", grown)
	}
	if shrunk := ChargeDelta(&old, StorageCharge{StorageClass: "gold", Storage: resource.MustParse("4Gi")}); len(shrunk) != 0 {
		t.Errorf("shrunk: %v, want nothing", shrunk)
	}
}

func TestValidateResourceQuota(t *testing.T) {
	tests := []struct {
		name string
		hard ResourceList
		want string // substring of the errors; "" = valid
	}{
		{"storage limits", ResourceList{ResourceRequestsStorage: resource.MustParse("50Gi"),
			StorageClassRequestsStorage("my-storage-class"): resource.MustParse("10Gi")}, ""},
		{"a resource vmop does not enforce", ResourceList{"cpu": resource.MustParse("4")},
			`spec.hard[cpu]: Unsupported value: "cpu"`},
		{"a class that is no name", ResourceList{StorageClassRequestsStorage("Not_A_Class"): resource.MustParse("1Gi")},
			"spec.hard[Not_A_Class.storageclass.storage.k8s.io/requests.storage]: Unsupported value"},
		{"a negative limit", ResourceList{ResourceRequestsStorage: resource.MustParse("-1Gi")},
			"spec.hard[requests.storage]: Invalid value"},
	}
	for _, tt := range tests {
		errs := ValidateResourceQuota(&ResourceQuota{Spec: ResourceQuotaSpec{Hard: tt.hard}}, nil)
		switch {
		case tt.want == "" && len(errs) > 0:
			t.Errorf("%s: %v, want valid", tt.name, errs)
		case tt.want != "" && !strings.Contains(errs.ToAggregate().Error(), tt.want):
			t.Errorf("%s: %v, want %q", tt.name, errs, tt.want)
		}
	}
}

// The Request and Limit columns print as kubectl prints quotas.
func TestQuotaColumns(t *testing.T) {
	obj := []byte(`{"status":{"hard":{"requests.storage":"50Gi","limits.cpu":"2","gold.storageclass.storage.k8s.io/requests.storage":"10Gi"},
		"used":{"requests.storage":"12Gi"}}}`)
	if got, want := quotaColumn(false)(obj), "gold.storageclass.storage.k8s.io/requests.storage: 0/10Gi, requests.storage: 12Gi/50Gi"; got != want {
		t.Errorf("Request = %q, want %q", got, want)
	}
	if got, want := quotaColumn(true)(obj), "limits.cpu: 0/2"; got != want {
		t.Errorf("Limit = %q, want %q", got, want)
	}
}
