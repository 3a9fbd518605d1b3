package crypto

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// target is the key a VM should be encrypted with: a provider and, when an EncryptionClass
// names one, a key ("" = a key generated for the VM).
type target struct {
	provider, key string
	source        string // for messages: `encryption class "x"` or "the default key provider"
}

// problem is why a VM cannot be encrypted or rekeyed as asked: the condition's reason and
// message.
type problem struct{ reason, message string }

// keyProblem classifies a provider and key against vCenter: nil when both exist.
func keyProblem(ctx context.Context, kmip *crypto.ManagerKmip, provider, key string) (*problem, error) {
	ok, err := kmip.IsValidProvider(ctx, provider)
	if err != nil {
		return nil, fmt.Errorf("key providers: %w", err)
	}
	if !ok {
		return &problem{model.ReasonKeyProviderNotFound, fmt.Sprintf("key provider %q not found", provider)}, nil
	}
	if key == "" {
		return nil, nil
	}
	if ok, err = kmip.IsValidKey(ctx, provider, key); err != nil {
		return nil, fmt.Errorf("key %s of provider %s: %w", key, provider, err)
	}
	if !ok {
		return &problem{model.ReasonKeyNotFound, fmt.Sprintf("key %q not found in key provider %q", key, provider)}, nil
	}
	return nil, nil
}

// target resolves the VM's key after the seed: spec.crypto.encryptionClassName (D10 has
// already put the namespace's default class there), else vCenter's default key provider
// when spec.crypto.useDefaultKeyProvider (default true). Without a key, the problem says
// why.
func (h *handler) target(ctx context.Context, vm *model.VirtualMachine) (*target, *problem, error) {
	c := vm.Spec.Crypto
	if c != nil && c.EncryptionClassName != "" {
		var ec model.EncryptionClass
		found, err := reconcile.LastSpecOf(ctx, h.js, events.Ref{Plural: pluralClasses, Namespace: vm.Namespace, Name: c.EncryptionClassName}, &ec)
		if err != nil {
			return nil, nil, err
		}
		src := fmt.Sprintf("encryption class %q", c.EncryptionClassName)
		if !found {
			return nil, &problem{model.ReasonEncryptionClassNotFound, src + " not found"}, nil
		}
		p, err := keyProblem(ctx, h.kmip, ec.Spec.KeyProvider, ec.Spec.KeyID)
		if err != nil {
			return nil, nil, err
		}
		if p != nil {
			return nil, &problem{model.ReasonEncryptionClassInvalid, src + ": " + p.message}, nil
		}
		return &target{provider: ec.Spec.KeyProvider, key: ec.Spec.KeyID, source: src}, nil, nil
	}
	if c != nil && c.UseDefaultKeyProvider != nil && !*c.UseDefaultKeyProvider {
		return nil, &problem{model.ReasonNoDefaultKeyProvider, "spec.crypto.useDefaultKeyProvider is false and no encryption class is named: no key to encrypt the VM with"}, nil
	}
	id, err := h.kmip.GetDefaultKmsClusterID(ctx, nil, true)
	if err != nil && !noDefaultProvider(err) {
		return nil, nil, fmt.Errorf("default key provider: %w", err) // retried with backoff
	}
	if id == "" {
		return nil, &problem{model.ReasonNoDefaultKeyProvider, "there is no default key provider"}, nil
	}
	return &target{provider: id, source: "the default key provider"}, nil, nil
}

// noDefaultProvider tells whether err is vCenter's answer to GetDefaultKmsCluster when no
// key provider is the default: a bare RuntimeFault (vcsim's "No default provider"). Its
// subtypes (NotAuthenticated, ...) and transport errors are failures to ask, not answers.
func noDefaultProvider(err error) bool {
	if !soap.IsSoapFault(err) {
		return false
	}
	switch soap.ToSoapFault(err).VimFault().(type) {
	case types.RuntimeFault, *types.RuntimeFault:
		return true
	}
	return false
}

// newKey is the key to encrypt k's VM with: t's key, else one the provider generates, so
// that the VM home and its disks get the same, known key in one reconfigure. A native key
// provider, which does not generate keys on request, leaves it to vCenter (no key ID); a
// failure to generate with any other provider is an error, retried.
// A generated key is recorded for the VM until the VM carries it (generated.go), so a
// reconfigure that keeps failing reuses one key rather than minting one per attempt.
func (h *handler) newKey(ctx context.Context, k *keying, t *target) (types.CryptoKeyId, error) {
	id := types.CryptoKeyId{KeyId: t.key, ProviderId: &types.KeyProviderId{Id: t.provider}}
	if id.KeyId != "" {
		return id, nil
	}
	if p := k.pending; p != nil && p.Provider == t.provider {
		id.KeyId = p.KeyID
		return id, nil
	}
	key, err := h.kmip.GenerateKey(ctx, t.provider)
	if err != nil {
		native, nerr := h.kmip.IsNativeProvider(ctx, t.provider)
		if nerr != nil || !native {
			return id, fmt.Errorf("generate a key with key provider %s: %w", t.provider, err)
		}
		return id, nil
	}
	k.pending = &generatedKey{Provider: t.provider, KeyID: key}
	if err := recordKey(ctx, h.js, k.o, k.prev, k.pending); err != nil {
		return id, err
	}
	id.KeyId = key
	return id, nil
}

// rekeys tells whether t differs from the key cur the VM has (api-rules §9.4): another
// provider, or a named key other than the VM's; a class without a key never rekeys a VM
// of its provider.
func rekeys(t *target, cur *types.CryptoKeyId) bool {
	curProvider := ""
	if cur.ProviderId != nil {
		curProvider = cur.ProviderId.Id
	}
	return t.provider != curProvider || t.key != "" && t.key != cur.KeyId
}
