package power

import (
	"context"
	"slices"
	"strings"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// withoutCryptoUnlessAsked drops the wait for crypto's VirtualMachineEncryptionSynced from
// waits when the VM asks for no encryption (no encryption storage class, no vTPM): crypto
// has nothing to do for it, so it never holds the VM. It looks the classes up only when
// that wait is there.
func (r *reconciler) withoutCryptoUnlessAsked(ctx context.Context, vm *model.VirtualMachine, waits []string) ([]string, error) {
	isCrypto := func(w string) bool { return strings.HasPrefix(w, model.ConditionEncryptionSynced+" (") }
	if !slices.ContainsFunc(waits, isCrypto) {
		return waits, nil
	}
	ask, err := reconcile.ReadCryptoAsk(ctx, r.js, vm)
	if err != nil || ask.Any() {
		return waits, err
	}
	return slices.DeleteFunc(waits, isCrypto), nil
}
