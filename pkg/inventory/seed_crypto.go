package inventory

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/vim25/types"
)

// keyProviders registers KeyProviders as standard (KMIP) key providers, the first one vCenter's
// default, so that "the default key provider" of the seed document exists and an EncryptionClass
// can name another. Standard providers generate keys on request (GenerateKey), so one reconfigure
// encrypts a VM's home and disks with the same, known key.
func (s *seeder) keyProviders(ctx context.Context) error {
	kmip, err := crypto.GetManagerKmip(s.c.Client)
	if err != nil {
		return fmt.Errorf("crypto manager: %w", err)
	}
	for i, id := range KeyProviders {
		provider, err := findKeyProvider(ctx, kmip, id)
		if err != nil {
			return err
		}
		if provider == nil {
			server := types.KmipServerSpec{
				ClusterId: types.KeyProviderId{Id: id},
				Info:      types.KmipServerInfo{Name: id + "-kms", Address: "127.0.0.1", Port: 5696},
			}
			if err := kmip.RegisterKmipServer(ctx, server); err != nil {
				return fmt.Errorf("register key provider %s: %w", id, err)
			}
		}
		if i > 0 || provider != nil && provider.UseAsDefault {
			continue
		}
		if err := kmip.MarkDefault(ctx, id); err != nil {
			return fmt.Errorf("make %s the default key provider: %w", id, err)
		}
	}
	return nil
}

// findKeyProvider returns the registration of provider id, nil when it is not registered. (Asking
// for the default provider is no shortcut: with none, vCenter answers with a bare RuntimeFault.)
func findKeyProvider(ctx context.Context, kmip *crypto.ManagerKmip, id string) (*types.KmipClusterInfo, error) {
	providers, err := kmip.ListKmipServers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("key providers: %w", err)
	}
	for i := range providers {
		if providers[i].ClusterId.Id == id {
			return &providers[i], nil
		}
	}
	return nil, nil
}
