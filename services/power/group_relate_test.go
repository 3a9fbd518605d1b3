package power

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

// TestRelateNamesTheGroupsAMemberConcerns checks which groups a VM's or group's record
// reconciles: the one it names, those it carries an owner reference of, those listing it
// in their boot order; no other group of the namespace, and every group for a deletion.
func TestRelateNamesTheGroupsAMemberConcerns(t *testing.T) {
	ctx := t.Context()
	js, _ := eventstest.JetStream(t)
	if err := events.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	put := func(plural, name, body string) events.SpecRecord {
		t.Helper()
		ref := events.Ref{Plural: plural, Namespace: "ns", Name: name}
		seq, err := events.AppendSpec(ctx, js, ref, events.OpPut, []byte(body), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return events.SpecRecord{Ref: ref, Op: events.OpPut, Seq: seq, Body: []byte(body)}
	}
	group := func(name, kind, listed string) {
		put(groupPlural, name, fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"bootOrder":[{"members":[{"kind":%q,"name":%q}]}]}}`, name, kind, listed))
	}
	group("named", "VirtualMachine", "other")
	group("owner", "VirtualMachine", "other")
	group("listing", "VirtualMachine", "vm")
	group("unrelated", "VirtualMachine", "other")
	group("parent", "VirtualMachineGroup", "child")
	group("vm-child", "VirtualMachine", "child")
	vm := put(plural, "vm", `{"metadata":{"name":"vm","ownerReferences":[{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachineGroup","name":"owner","uid":"u"},
		{"apiVersion":"v1","kind":"ConfigMap","name":"unrelated","uid":"c"}]},"spec":{"groupName":"named"}}`)
	// vm-child lists a VM named child, not this group.
	child := put(groupPlural, "child", `{"metadata":{"name":"child"},"spec":{"groupName":"named"}}`)
	loner := put(plural, "loner", `{"metadata":{"name":"loner"},"spec":{}}`)

	x := newMemberIndex(js)
	for _, c := range []struct {
		rec  events.SpecRecord
		want []string
		all  bool
	}{
		{rec: vm, want: []string{"listing", "named", "owner"}},
		{rec: child, want: []string{"named", "parent"}},
		{rec: loner, want: nil},
		{rec: events.SpecRecord{Ref: vm.Ref, Op: events.OpDelete, Seq: vm.Seq + 10}, all: true},
		{rec: events.SpecRecord{Ref: vm.Ref, Op: events.OpPut, Body: []byte("{")}, all: true},
	} {
		names, all, err := x.relate(ctx, c.rec)
		if err != nil || all != c.all || !slices.Equal(names, c.want) {
			t.Errorf("relate(%s %s) = %v, all %v, %v; want %v, all %v", c.rec.Op, c.rec.Ref, names, all, err, c.want, c.all)
		}
	}
}
