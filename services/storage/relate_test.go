package storage

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// A claim's removal concerns the VMs whose spec.volumes name it, not every VM of the
// namespace: deleting N VMs with a claim each reconciled every VM N times.
func TestClaimRemovalConcernsTheVMsNamingIt(t *testing.T) {
	ctx := t.Context()
	js, _ := eventstest.JetStream(t)
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	put := func(ref events.Ref, body string) uint64 {
		t.Helper()
		seq, err := events.AppendSpec(ctx, js, ref, events.OpPut, []byte(body), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	vm := func(name, claim string) {
		volumes := ""
		if claim != "" {
			volumes = fmt.Sprintf(`{"name":"d","persistentVolumeClaim":{"claimName":%q}}`, claim)
		}
		put(events.Ref{Plural: "virtualmachines", Namespace: "ns", Name: name},
			fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","uid":"u-%s"},"spec":{"volumes":[%s]}}`, name, name, volumes))
	}
	vm("vm-a", "shared")
	vm("vm-b", "shared")
	vm("vm-c", "other")
	vm("vm-d", "")
	claim := events.Ref{Plural: pluralClaims, Namespace: "ns", Name: "shared"}
	seq := put(claim, `{"metadata":{"name":"shared","namespace":"ns","uid":"c1"}}`)
	if _, err := events.AppendSpec(ctx, js, claim, events.OpDelete, nil, seq, nil); err != nil {
		t.Fatal(err)
	}
	tombstone, err := events.LastSpec(ctx, js, claim)
	if err != nil {
		t.Fatal(err)
	}

	names, all, err := vmsOfClaim(newVMClaims(js))(ctx, tombstone)
	slices.Sort(names)
	if err != nil || all || !slices.Equal(names, []string{"vm-a", "vm-b"}) {
		t.Errorf("vmsOfClaim(removal) = %v, all %v, %v; want vm-a and vm-b only", names, all, err)
	}
}
