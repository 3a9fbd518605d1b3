package crypto

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// generatedKey is crypto's record about a VM (events.Slice.Record): the key generated for
// its encrypt or rekey that has not succeeded yet. It is published before the reconfigure
// that uses the key, so the next attempt, after a refusal, a crash or on another replica,
// reuses it rather than have the provider mint another. (The VM cannot carry it: nothing
// reconfigures the VM before the encrypt itself.) Only a crash between the generation and
// the publish leaves a key unused in the provider. A key ID names a key; it is no secret.
type generatedKey struct {
	Provider string `json:"provider"`
	KeyID    string `json:"keyId"`
}

// pendingKey is the key the VM's slice prev records, nil when none (or unreadable: the
// next generation records another).
func pendingKey(prev events.Slice) *generatedKey {
	var rec struct {
		Generated *generatedKey `json:"generatedKey"`
	}
	if len(prev.Record) == 0 || json.Unmarshal(prev.Record, &rec) != nil {
		return nil
	}
	return rec.Generated
}

// record is k as the slice's record: nil (no record) once no key is pending.
func (k *generatedKey) record() any {
	if k == nil {
		return nil
	}
	return map[string]*generatedKey{"generatedKey": k}
}

// settled tells whether the VM now carries k (cur is the VM's key): the record is done.
func (k *generatedKey) settled(cur *types.CryptoKeyId) bool {
	return k != nil && cur != nil && cur.KeyId == k.KeyID && cur.ProviderId != nil && cur.ProviderId.Id == k.Provider
}

// recordKey publishes the slice prev with k as its record, status unchanged, before the
// key is used.
func recordKey(ctx context.Context, js jetstream.JetStream, o reconcile.Object, prev events.Slice, k *generatedKey) error {
	raw, err := json.Marshal(k.record())
	if err != nil {
		return fmt.Errorf("%w: encode the generated key's record of %s: %v", events.ErrPermanent, o.Ref, err)
	}
	slice := events.Slice{Service: model.ServiceCrypto, UID: o.Meta.UID, Generation: prev.Generation, Status: prev.Status, Record: raw}
	if slice.Generation == 0 {
		slice.Generation = o.Meta.Generation // no slice yet
	}
	if _, err := events.PublishStatus(ctx, js, o.Ref, slice); err != nil {
		return fmt.Errorf("record the key generated for %s: %w", o.Ref, err)
	}
	return nil
}
