package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/vcenter"
)

// CryptoAsk is what a VirtualMachine asks of the crypto service, after the seed document's
// table: an encryption storage class encrypts the VM home (Config) and its disks, a vTPM the
// VM home. The crypto service acts on it; power waits for crypto only when it asks anything.
type CryptoAsk struct {
	// StoragePolicyID is the encryption storage class's SPBM profile; "" when the storage
	// class does not encrypt.
	StoragePolicyID string
	// EncryptDisks: the storage class is an encryption storage class.
	EncryptDisks bool
	// VTPM: the VM's class adds a virtual TPM.
	VTPM bool
	// Class is the VM's class as read (zero when absent): the vTPM follows it only once
	// the VM has that class's configuration (vcenter.KeyAppliedClass), as a resize does.
	Class model.AppliedClass
}

// Any tells whether the VM asks for encryption at all.
func (a CryptoAsk) Any() bool { return a.EncryptDisks || a.VTPM }

// ReadCryptoAsk looks up the VM's storage class and VM class in SPECS. An absent class
// asks for nothing (placement reports it missing).
func ReadCryptoAsk(ctx context.Context, js jetstream.JetStream, vm *model.VirtualMachine) (CryptoAsk, error) {
	var ask CryptoAsk
	var sc model.StorageClass
	found, err := LastSpecOf(ctx, js, events.Ref{Plural: "storageclasses", Name: vm.Spec.StorageClass}, &sc)
	if err != nil {
		return ask, err
	}
	if found && sc.Labels[model.EncryptionEnabledLabel] == "true" {
		ask.EncryptDisks, ask.StoragePolicyID = true, sc.Parameters["storagePolicyID"]
	}
	var class model.VirtualMachineClass
	found, err = LastSpecOf(ctx, js, events.Ref{Plural: "virtualmachineclasses", Namespace: vm.Namespace, Name: vm.Spec.ClassName}, &class)
	if err != nil || !found {
		return ask, err
	}
	if hw, err := vcenter.ClassHardwareOf(class.Spec); err == nil {
		ask.VTPM = hw.VTPM
	}
	ask.Class = model.AppliedClassOf(class.Name, &class)
	return ask, nil
}

// LastSpecOf decodes the newest spec of ref into dst; found is false for no name, no such
// object or a deleted one.
func LastSpecOf(ctx context.Context, js jetstream.JetStream, ref events.Ref, dst any) (found bool, err error) {
	if ref.Name == "" {
		return false, nil
	}
	rec, err := events.LastSpec(ctx, js, ref)
	switch {
	case errors.Is(err, events.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case rec.Op == events.OpDelete:
		return false, nil
	}
	if err := json.Unmarshal(rec.Body, dst); err != nil {
		return false, fmt.Errorf("decode %s: %w", ref, err)
	}
	return true, nil
}
