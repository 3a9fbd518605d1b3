// Package network gives a VirtualMachine its network interfaces, addresses and guest bootstrap data.
//
// Once placement reports the vSphere VM created, the service makes the VM's network
// adapters match spec.network.interfaces (adapter types from the class ConfigSpec, then
// VirtualVmxnet3; each on its named network), gives every interface an address (static
// from the spec, DHCP, or one claimed from the network's pool, see ipam.go), reports
// status.network (the intended guest configuration, and what the guest reports of its
// network, guest.go) and delivers cloud-init data through the guestinfo ExtraConfig keys
// before the VM first powers on; it runs the readiness probes (probe.go). Its conditions
// are VirtualMachineNetworkReady, VirtualMachineBootstrapReady,
// VirtualMachineGuestNetworkConfigSynced, VirtualMachineTools and Ready. Run is the whole
// service; the stack binary wires it with configuration.
package network

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// Config is what the service needs.
type Config struct {
	JetStream jetstream.JetStream
	// VCenter is the vCenter SDK endpoint (with user:password) and how to trust it.
	VCenter vcenter.Endpoint
	Logger  *slog.Logger // slog.Default() when nil

	// Pools are the IPv4 address pools by network name: an interface on such a network
	// that sets neither addresses nor DHCP gets an address of the pool, and the pool's
	// first address as gateway. Interfaces on other networks are configured by DHCP.
	// Pools must not overlap. nil means DefaultPools().
	Pools map[string]netip.Prefix
	// Nameservers and SearchDomains are the guest's DNS settings when spec.network gives
	// none (the role of VM Operator's ConfigMap in the seed's table). nil means
	// DefaultNameservers and no search domains.
	Nameservers   []string
	SearchDomains []string

	// GuestPoll is how often the guests of all VMs are read again, to report what changed
	// in them (addresses, VMware Tools, heartbeat); zero means DefaultGuestPoll. VMs with
	// a readiness probe are also read every probe period.
	GuestPoll time.Duration
}

// DefaultNameservers are the DNS servers guests get when neither the spec nor the
// configuration names any (those of the seed document's example).
var DefaultNameservers = []string{"8.8.8.8", "8.8.4.4"}

// DefaultPools gives the i-th network of the seeded inventory the pool 192.168.<i>.0/24:
// "VM Network" 192.168.0.0/24 (gateway 192.168.0.1), "workload-network" 192.168.1.0/24.
func DefaultPools() map[string]netip.Prefix {
	pools := make(map[string]netip.Prefix, len(inventory.Networks))
	for i, n := range inventory.Networks {
		pools[n.Name] = netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 168, byte(i), 0}), 24)
	}
	return pools
}

// resync re-reads every VM this often, for changes no event announces (an adapter
// removed in vCenter).
const resync = 5 * time.Minute

// Run reconciles VirtualMachines until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.VCenter.URL == nil {
		return errors.New("network: no vCenter URL configured")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Pools == nil {
		cfg.Pools = DefaultPools()
	}
	if cfg.Nameservers == nil {
		cfg.Nameservers = DefaultNameservers
	}
	pools, err := newPools(cfg.Pools)
	if err != nil {
		return fmt.Errorf("network: %w", err)
	}
	kv, err := events.IPAM(ctx, cfg.JetStream)
	if err != nil {
		return fmt.Errorf("network: %w", err)
	}
	vc, err := vcenter.Connect(ctx, cfg.VCenter)
	if err != nil {
		return err
	}
	defer vcenter.Logout(ctx, vc)
	h := &handler{
		js: cfg.JetStream, vc: vc, ipam: &allocator{kv: kv, pools: pools}, now: time.Now,
		backings: newBackings(vc, time.Now),
		dns:      dnsDefaults{nameservers: cfg.Nameservers, searchDomains: cfg.SearchDomains},
	}
	rcfg := loopConfig(cfg.Logger)
	// Guest changes and probe periods reconcile a VM outside the streams' order: through
	// the trigger, which serialises them with the loop's reconciles of the same VM.
	trigger := reconcile.NewTrigger(cfg.JetStream, rcfg, h.reconcile)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.requestAt = func(ref events.Ref, at time.Time) { trigger.RequestAt(ctx, ref, at) }
	h.guests = newGuestWatch(vc, cmp.Or(cfg.GuestPoll, DefaultGuestPoll), trigger.Request, cfg.Logger.With("service", model.ServiceNetwork))
	var watching sync.WaitGroup
	watching.Go(func() { h.ipam.sweepPeriodically(ctx, cfg.JetStream, cfg.Logger) })
	watching.Go(func() {
		// After a restart the watch and the probes know no VM: each reconcile tells them.
		if err := trigger.RequestAll(ctx); err != nil && ctx.Err() == nil {
			cfg.Logger.Warn("network: reconciling every VM at start", "err", err)
		}
		h.guests.run(ctx)
	})
	err = trigger.Run(ctx)
	cancel()
	watching.Wait()
	trigger.Wait()
	return err
}

func loopConfig(log *slog.Logger) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceNetwork, Plural: "virtualmachines", Workers: 8,
		// power: a power-on is when vCenter applies a customization (GuestCustomization).
		Inputs:  []string{model.ServicePlacement, model.ServicePower},
		Related: []string{"virtualmachineclasses", pluralSecrets},
		Resync:  resync,
		Concern: concern,
		Logger:  log,
	}
}

// Access is what network does on NATS, which its identity is allowed: its consumers and
// the address bucket.
func Access() events.ServiceAccess {
	return events.ServiceAccess{
		Service:   model.ServiceNetwork,
		Consumers: reconcile.Consumers(loopConfig(nil)),
		Buckets:   []string{events.BucketIPAM},
	}
}
