package crypto

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/crypto"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/inventory/deploytest"
	"github.com/vmop/vmop/pkg/model"
)

// Only vCenter's answer that there is no default key provider becomes the
// NoDefaultKeyProvider problem; a failure to ask (transport, session) is an error, which
// the loop retries with backoff.
func TestDefaultProviderLookupFailures(t *testing.T) {
	vm := &model.VirtualMachine{Spec: model.VirtualMachineSpec{StorageClass: "my-encrypted-storage-class"}}

	t.Run("no default provider", func(t *testing.T) {
		// A bare vcsim has no key provider: it answers with a bare RuntimeFault.
		err := simulator.VPX().Run(func(ctx context.Context, c *vim25.Client) error {
			h := &handler{kmip: crypto.NewManagerKmip(c)}
			_, prob, err := h.target(ctx, vm)
			if err != nil || prob == nil || prob.reason != model.ReasonNoDefaultKeyProvider {
				t.Errorf("target = problem %+v, error %v; want %s and no error", prob, err, model.ReasonNoDefaultKeyProvider)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("session closed", func(t *testing.T) {
		c, err := govmomi.NewClient(t.Context(), vc.Sim.URL, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Logout(t.Context()); err != nil {
			t.Fatal(err)
		}
		h := &handler{kmip: crypto.NewManagerKmip(c.Client)}
		if _, prob, err := h.target(t.Context(), vm); err == nil || prob != nil {
			t.Errorf("target = problem %+v, error %v; want the NotAuthenticated error and no problem", prob, err)
		}
	})

	t.Run("vCenter unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close() // nothing listens there any more: connections are refused
		sc := soap.NewClient(&url.URL{Scheme: "https", Host: addr, Path: "/sdk"}, true)
		c := &vim25.Client{Client: sc, RoundTripper: sc, ServiceContent: vc.Client.ServiceContent}
		h := &handler{kmip: crypto.NewManagerKmip(c)}
		if _, prob, err := h.target(t.Context(), vm); err == nil || prob != nil {
			t.Errorf("target = problem %+v, error %v; want the connection error and no problem", prob, err)
		}
	})
}

// A VM whose default key provider lookup fails once is encrypted when the loop retries,
// instead of staying with a false NoDefaultKeyProvider condition.
func TestDefaultProviderLookupRetried(t *testing.T) {
	var mu sync.Mutex
	lookups := 0
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		if _, ok := m.Body.(*types.GetDefaultKmsCluster); !ok {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if lookups++; lookups == 1 {
			return nil, &types.SystemError{Reason: "injected: KMS cluster lookup failed"}
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })

	js := startService(t)
	v := deploytest.NewVM("my-namespace", "enc-retried-lookup", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})
	// Every slice the service publishes for the VM, to see that none tells of no provider.
	published, err := js.Conn().SubscribeSync(events.StatusSubject(v.Ref, model.ServiceCrypto))
	if err != nil {
		t.Fatal(err)
	}
	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	synced(t, js, v, 1, "True", "")
	for done := false; !done; { // up to the slice that says True
		msg, err := published.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("the True slice: %v", err)
		}
		if bytes.Contains(msg.Data, []byte(model.ReasonNoDefaultKeyProvider)) {
			t.Errorf("published %s", msg.Data)
		}
		done = bytes.Contains(msg.Data, []byte(`"status":"True"`))
	}
	if provider, key := keyOf(must(keys(t, vm))); provider != inventory.KeyProvider || key == "" {
		t.Errorf("config.keyId = %s/%q, want a key of %s", provider, key, inventory.KeyProvider)
	}
	mu.Lock()
	defer mu.Unlock()
	if lookups < 2 {
		t.Errorf("%d default provider lookups, want the failed one and a retry", lookups)
	}
}

// An encrypt that keeps failing is retried with the key generated for its first attempt:
// one key is generated, and the VM is encrypted with it once vCenter accepts.
func TestFailingEncryptGeneratesOneKey(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "enc-failing", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})

	refusals := refuseEncrypts(t)

	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	synced(t, js, v, 1, "False", model.ReasonReconfigureError)
	for range 2 { // two more attempts, each at a new generation
		v.Put(t, js, false)
		synced(t, js, v, generation(t, js, v), "False", model.ReasonReconfigureError)
	}

	tried := refusals.allow(t)
	if len(tried) < 3 || tried[0] == "" {
		t.Fatalf("refused encrypts with keys %q, want 3 or more with a generated key", tried)
	}
	first := tried[0]

	v.Put(t, js, false)
	synced(t, js, v, generation(t, js, v), "True", "")
	if _, key := keyOf(must(keys(t, vm))); key != first {
		t.Errorf("the VM is encrypted with key %q, want the one generated first, %q", key, first)
	}
	if n := refusals.keysGenerated(); n != 1 {
		t.Errorf("%d keys generated for %d attempts, want 1", n, len(tried)+1)
	}
}

// must drops keys' other results.
func must(home *types.CryptoKeyId, _ []*types.CryptoKeyId, _ bool) *types.CryptoKeyId { return home }

// A key provider that fails to generate a key is asked again on the retry; the VM is not
// encrypted meanwhile with a key left to vCenter.
func TestGenerateKeyFailureRetried(t *testing.T) {
	js := startService(t)
	v := deploytest.NewVM("my-namespace", "enc-generate-fails", model.VirtualMachineSpec{ClassName: inventory.SeedClassName, StorageClass: "my-encrypted-storage-class"})

	var mu sync.Mutex
	generated := 0
	var encrypted []string // the keys of the encrypts asked
	vc.Sim.Intercept(func(_ *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		mu.Lock()
		defer mu.Unlock()
		switch req := m.Body.(type) {
		case *types.GenerateKey:
			if generated++; generated == 1 {
				return nil, &types.SystemError{Reason: "injected: the KMS is unreachable"}
			}
		case *types.ReconfigVM_Task:
			if enc, ok := req.Spec.Crypto.(*types.CryptoSpecEncrypt); ok {
				encrypted = append(encrypted, enc.CryptoKeyId.KeyId)
			}
		}
		return nil, nil
	})
	t.Cleanup(func() { vc.Sim.Intercept(nil) })

	v.Put(t, js, false)
	vm := v.Deploy(t, vc, js, inventory.PhotonImage)
	synced(t, js, v, 1, "True", "")
	_, key := keyOf(must(keys(t, vm)))
	mu.Lock()
	defer mu.Unlock()
	if generated != 2 || len(encrypted) != 1 || encrypted[0] == "" || encrypted[0] != key {
		t.Errorf("%d key generations, encrypts with keys %q, VM key %q; want 2 generations (the failed one and the retry) and one encrypt with the VM's key",
			generated, encrypted, key)
	}
}

// A native key provider does not generate keys on request: vCenter is left to (no key ID).
func TestNativeProviderKey(t *testing.T) {
	err := simulator.VPX().Run(func(ctx context.Context, c *vim25.Client) error {
		kmip := crypto.NewManagerKmip(c)
		if err := kmip.RegisterKmsCluster(ctx, "native", types.KmipClusterInfoKmsManagementTypeNativeProvider); err != nil {
			return err
		}
		h := &handler{kmip: kmip}
		key, err := h.newKey(ctx, &keying{}, &target{provider: "native"})
		if err != nil || key.KeyId != "" || key.ProviderId == nil || key.ProviderId.Id != "native" {
			t.Errorf("newKey = %+v, %v; want provider native without a key ID, no error", key, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
