package inventory

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/crypto"
	vapicrypto "github.com/vmware/govmomi/vapi/crypto"
	"github.com/vmware/govmomi/vim25/types"
)

// keyProvider registers KeyProvider as a native key provider and makes it vCenter's default, so
// "the default key provider" of the seed document exists.
func (s *seeder) keyProvider(ctx context.Context) error {
	kmip, err := crypto.GetManagerKmip(s.c.Client)
	if err != nil {
		return fmt.Errorf("crypto manager: %w", err)
	}
	provider, err := findKeyProvider(ctx, kmip)
	if err != nil {
		return err
	}
	if provider == nil {
		spec := vapicrypto.KmsProviderCreateSpec{Provider: KeyProvider}
		if err := vapicrypto.NewManager(s.rest).KmsProviderCreate(ctx, spec); err != nil {
			return fmt.Errorf("create native key provider %s: %w", KeyProvider, err)
		}
	} else if provider.UseAsDefault {
		return nil
	}
	if err := kmip.MarkDefault(ctx, KeyProvider); err != nil {
		return fmt.Errorf("make %s the default key provider: %w", KeyProvider, err)
	}
	return nil
}

// findKeyProvider returns KeyProvider's registration, nil when it is not registered. (Asking for the
// default provider is no shortcut: with none, vCenter answers with a bare RuntimeFault.)
func findKeyProvider(ctx context.Context, kmip *crypto.ManagerKmip) (*types.KmipClusterInfo, error) {
	providers, err := kmip.ListKmipServers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("key providers: %w", err)
	}
	for i := range providers {
		if providers[i].ClusterId.Id == KeyProvider {
			return &providers[i], nil
		}
	}
	return nil, nil
}
