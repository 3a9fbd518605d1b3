package network

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/events/eventstest"
)

func TestNewPools(t *testing.T) {
	tests := []struct {
		name  string
		pools map[string]netip.Prefix
		ok    bool
	}{
		{"defaults", DefaultPools(), true},
		{"overlap", map[string]netip.Prefix{"a": netip.MustParsePrefix("10.0.0.0/16"), "b": netip.MustParsePrefix("10.0.1.0/24")}, false},
		{"ipv6", map[string]netip.Prefix{"a": netip.MustParsePrefix("fd00::/64")}, false},
		{"too small", map[string]netip.Prefix{"a": netip.MustParsePrefix("10.0.0.0/30")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newPools(tt.pools); (err == nil) != tt.ok {
				t.Errorf("newPools(%v) error = %v, want ok %v", tt.pools, err, tt.ok)
			}
		})
	}
}

// A holder gets the same address every time; an address held by another is skipped;
// a previous address is kept; release frees exactly the VM's claims.
func TestClaims(t *testing.T) {
	a, p := smallPool(t)
	kv, ctx := a.kv, t.Context()

	first, err := a.claim(ctx, p, holder("vm-a", "eth0"), netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if p.index(first) == p.size || first == p.gateway {
		t.Fatalf("claimed %s, want a host address of %s other than the gateway %s", first, p.prefix, p.gateway)
	}
	if again, err := a.claim(ctx, p, holder("vm-a", "eth0"), netip.Addr{}); err != nil || again != first {
		t.Errorf("second claim = %s, %v; want %s again", again, err, first)
	}

	// vm-b's interface hashes to the same start when its first candidate is taken.
	if err := a.release(ctx, "vm-a"); err != nil {
		t.Fatal(err)
	}
	bFirst, err := a.claim(ctx, p, holder("vm-b", "eth0"), netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.release(ctx, "vm-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, bFirst.String(), []byte("someone/eth0")); err != nil {
		t.Fatal(err)
	}
	bNext, err := a.claim(ctx, p, holder("vm-b", "eth0"), netip.Addr{})
	if err != nil || bNext == bFirst || p.index(bNext) == p.size {
		t.Errorf("claim with the first candidate taken = %s, %v; want another address of the pool than %s", bNext, err, bFirst)
	}

	// The previous address is preferred while it is free.
	prev := p.at(p.size - 1)
	if prev == bNext || prev == bFirst {
		prev = p.at(0)
	}
	got, err := a.claim(ctx, p, holder("vm-c", "eth0"), prev)
	if err != nil || got != prev {
		t.Errorf("claim with previous %s = %s, %v; want the previous address", prev, got, err)
	}

	// The pool has 5 addresses: fill it and the next claim fails.
	for i := range 5 {
		_, _ = a.claim(ctx, p, holder("filler", string(rune('a'+i))), netip.Addr{})
	}
	if _, err := a.claim(ctx, p, holder("late", "eth0"), netip.Addr{}); err == nil {
		t.Error("claim from a full pool succeeded")
	}
	if err := a.release(ctx, "vm-c"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, prev.String()); err == nil {
		t.Errorf("%s still claimed after vm-c released its addresses", prev)
	}
	if e, err := kv.Get(ctx, bFirst.String()); err != nil || string(e.Value()) != "someone/eth0" {
		t.Errorf("another holder's claim of %s was touched: %v", bFirst, err)
	}

	// A record left by a crash between recording a claim and making it, of an address
	// another holder has, does not release that address; releasing clears the records.
	if err := a.record(ctx, "vm-d", bFirst.String()); err != nil {
		t.Fatal(err)
	}
	if err := a.release(ctx, "vm-d"); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, bFirst.String()); err != nil || string(e.Value()) != "someone/eth0" {
		t.Errorf("a stale record released another holder's claim of %s: %v", bFirst, err)
	}
	for _, uid := range []string{"vm-a", "vm-c", "vm-d"} { // vm-b claimed again after its release
		if e, err := kv.Get(ctx, heldKey(uid)); err == nil {
			t.Errorf("record %q left after %s released its addresses", e.Value(), uid)
		}
	}
}

// A static address the pool hands out is claimed: the pool gives it to no other interface,
// another interface cannot have it statically too, and its VM's release frees it. The
// gateway and addresses outside the pool are nobody's to claim.
func TestStaticClaims(t *testing.T) {
	a, p := smallPool(t)
	kv, ctx := a.kv, t.Context()
	static := p.at(2)
	if err := a.claimStatic(ctx, p, holder("vm-s", "eth0"), static, noneGone); err != nil {
		t.Fatal(err)
	}
	if err := a.claimStatic(ctx, p, holder("vm-s", "eth0"), static, noneGone); err != nil {
		t.Errorf("claiming its own static address again: %v", err)
	}
	if err := a.claimStatic(ctx, p, holder("vm-t", "eth0"), static, noneGone); !errors.Is(err, errAddressHeld) {
		t.Errorf("another interface's static claim of %s: %v, want %v", static, err, errAddressHeld)
	}
	for _, outside := range []netip.Addr{p.gateway, netip.MustParseAddr("10.2.0.5")} {
		if err := a.claimStatic(ctx, p, holder("vm-t", "eth0"), outside, noneGone); err != nil {
			t.Errorf("static %s: %v, want nothing claimed", outside, err)
		}
		if _, err := kv.Get(ctx, outside.String()); err == nil {
			t.Errorf("static %s was claimed", outside)
		}
	}
	var pooled []netip.Addr
	for i := range p.size - 1 {
		got, err := a.claim(ctx, p, holder("vm-p", fmt.Sprint(i)), netip.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		pooled = append(pooled, got)
	}
	if slices.Contains(pooled, static) {
		t.Errorf("the pool handed out %s, held statically by vm-s (gave %v)", static, pooled)
	}
	if _, err := a.claim(ctx, p, holder("vm-p", "last"), netip.Addr{}); !errors.Is(err, errPoolExhausted) {
		t.Errorf("claim from a pool whose addresses are all held: %v, want %v", err, errPoolExhausted)
	}
	// vm-s's interface renamed: the new name takes the address over from the gone one.
	renamed := func(h string) bool { return h == holder("vm-s", "eth0") }
	if err := a.claimStatic(ctx, p, holder("vm-s", "eth1"), static, renamed); err != nil {
		t.Errorf("static claim of %s by the renamed interface: %v", static, err)
	}
	if e, err := kv.Get(ctx, static.String()); err != nil || string(e.Value()) != holder("vm-s", "eth1") {
		t.Errorf("claim of %s after the rename: %v, want held by %s", static, err, holder("vm-s", "eth1"))
	}
	if err := a.release(ctx, "vm-s"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.claim(ctx, p, holder("vm-p", "last"), netip.Addr{}); err != nil || got != static {
		t.Errorf("claim after vm-s released its static address: %s, %v; want %s", got, err, static)
	}
}

func noneGone(string) bool { return false }

// Releasing the addresses a VM no longer uses frees those alone: its MACs, the addresses
// it keeps, other holders' claims and a claim recorded but not made yet stay; its record
// lists what it may still hold.
func TestReleaseAddresses(t *testing.T) {
	kv := ipamBucket(t)
	a := &allocator{kv: kv}
	ctx := t.Context()
	for key, holder := range map[string]string{"10.0.0.2": "vm-a/eth0", "10.0.0.3": "vm-a/eth1", "00-50-56-00-00-01": "vm-a/eth1", "10.0.0.4": "vm-b/eth0"} {
		if ok, err := a.take(ctx, key, holder); err != nil || !ok {
			t.Fatalf("claim %s for %s: %v %v", key, holder, ok, err)
		}
	}
	for _, key := range []string{"10.0.0.4", "10.0.0.5"} { // another's claim; one not made yet
		if err := a.record(ctx, "vm-a", key); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.releaseAddresses(ctx, "vm-a", func(addr string) bool { return addr == "10.0.0.2" }); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"10.0.0.2": "vm-a/eth0", "10.0.0.3": "", "00-50-56-00-00-01": "vm-a/eth1", "10.0.0.4": "vm-b/eth0"} {
		e, err := kv.Get(ctx, key)
		got := ""
		if err == nil {
			got = string(e.Value())
		}
		if got != want {
			t.Errorf("claim %s held by %q, want %q", key, got, want)
		}
	}
	record := func() []string {
		e, err := kv.Get(ctx, heldKey("vm-a"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(string(e.Value()), "\n")
		slices.Sort(got)
		return got
	}
	if got, want := record(), []string{"00-50-56-00-00-01", "10.0.0.2", "10.0.0.5"}; !slices.Equal(got, want) {
		t.Errorf("record %v, want %v", got, want)
	}
	if err := a.releaseAddresses(ctx, "vm-a", func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "10.0.0.2"); err == nil {
		t.Error("10.0.0.2 still claimed once vm-a uses no address")
	}
	if got, want := record(), []string{"00-50-56-00-00-01", "10.0.0.5"}; !slices.Equal(got, want) {
		t.Errorf("record once vm-a uses no address: %v, want %v", got, want)
	}
}

// Claims recorded at once for one VM (replicas reconciling it together) all land in its
// record.
func TestRecordConcurrently(t *testing.T) {
	kv := ipamBucket(t)
	a := &allocator{kv: kv}
	var wg sync.WaitGroup
	want := make([]string, 8)
	for i := range want {
		want[i] = fmt.Sprintf("10.0.0.%d", i+1)
		wg.Go(func() {
			if err := a.record(t.Context(), "vm-a", want[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	e, err := kv.Get(t.Context(), heldKey("vm-a"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(string(e.Value()), "\n")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("record = %v, want %v", got, want)
	}
}

// smallPool is an allocator over a fresh IPAM bucket with one pool of 5 addresses,
// 10.1.0.0/29.
func smallPool(t *testing.T) (*allocator, pool) {
	t.Helper()
	pools, err := newPools(map[string]netip.Prefix{"net": netip.MustParsePrefix("10.1.0.0/29")})
	if err != nil {
		t.Fatal(err)
	}
	return &allocator{kv: ipamBucket(t), pools: pools}, pools["net"]
}

// ipamBucket is the IPAM bucket in a fresh NATS of the test's own.
func ipamBucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	js, _ := eventstest.JetStream(t)
	kv, err := events.IPAM(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
