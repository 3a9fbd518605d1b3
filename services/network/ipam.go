package network

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// The address allocator. Each network with a pool hands out the pool's host addresses
// except the first (the gateway): in a /24, .2 to .254. An interface's address is found
// deterministically: the candidates are, in order, the address the interface held in the
// service's previous slice, then the pool's addresses starting at an offset given by a
// hash of "<vm uid>/<interface name>" and wrapping around. The first candidate that can
// be claimed is taken. A claim is a key in the IPAM bucket (events.BucketIPAM) named by
// the address and holding "<vm uid>/<interface name>" (adapters' MAC addresses are
// claimed there the same way, mac.go): creating it fails when the key exists, so
// concurrent reconciles and replicas never share an address, and a holder that finds its
// own claim (a redelivery, a crash before its slice was published) keeps it. A static
// address in the range a pool hands out is claimed the same way (claimStatic). An address
// the VM's interfaces no longer have (changed, or its interface removed or renamed) is
// released by the first plan that finds its guest not using it (releaseAddresses); a
// renamed interface takes its static address over. Deleting the
// VM releases its claims, found in the record "held.<vm uid>" that lists them. The claimed
// address is what the guest is configured with (status.network.config), not what it is
// said to have: status.network.primaryIP4 is only ever what the guest reports (guest.go).

// pool is one network's address pool.
type pool struct {
	prefix  netip.Prefix
	gateway netip.Addr
	first   netip.Addr // first address handed out
	size    uint64     // number of addresses handed out
}

func newPools(in map[string]netip.Prefix) (map[string]pool, error) {
	out := make(map[string]pool, len(in))
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		p := in[name].Masked()
		if !p.Addr().Is4() || p.Bits() > 29 {
			return nil, fmt.Errorf("pool of network %q: %s is not an IPv4 prefix of at least 8 addresses", name, in[name])
		}
		for _, other := range names[:i] {
			if p.Overlaps(in[other]) {
				return nil, fmt.Errorf("pools of networks %q and %q overlap", other, name)
			}
		}
		gw := p.Addr().Next()
		out[name] = pool{prefix: p, gateway: gw, first: gw.Next(), size: uint64(1)<<(32-p.Bits()) - 3}
	}
	return out, nil
}

// at is the i-th address handed out.
func (p pool) at(i uint64) netip.Addr {
	b := p.first.As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n += uint32(i)
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// index is the position of a among the addresses the pool hands out; p.size when it is
// none of them.
func (p pool) index(a netip.Addr) uint64 {
	if !a.Is4() || !p.prefix.Contains(a) || a.Compare(p.first) < 0 || a.Compare(p.at(p.size-1)) > 0 {
		return p.size
	}
	b, f := a.As4(), p.first.As4()
	return uint64(binary.BigEndian.Uint32(b[:]) - binary.BigEndian.Uint32(f[:]))
}

// errPoolExhausted: every address of the pool is held by others.
var errPoolExhausted = errors.New("address pool exhausted")

// errAddressHeld: a static address the pool hands out is another interface's.
var errAddressHeld = errors.New("held by another interface")

// allocator claims addresses in the IPAM bucket.
type allocator struct {
	kv    jetstream.KeyValue
	pools map[string]pool
}

// holder is the claim value of an interface.
func holder(uid, iface string) string { return uid + "/" + iface }

// claim returns the address of the holder in p, trying prev (the address it held
// before, if any) first.
func (a *allocator) claim(ctx context.Context, p pool, holder string, prev netip.Addr) (netip.Addr, error) {
	i, err := a.claimFirst(ctx, holder, p.size, func(i uint64) string { return p.at(i).String() }, p.index(prev))
	if errors.Is(err, errPoolExhausted) {
		return netip.Addr{}, fmt.Errorf("%w: %s", err, p.prefix)
	}
	return p.at(i), err
}

// claimStatic claims for holder the static address addr when p hands it out, so the pool
// never gives it to another interface, and an address the pool gave another interface is
// not configured twice.
func (a *allocator) claimStatic(ctx context.Context, p pool, holder string, addr netip.Addr, gone func(holder string) bool) error {
	if p.index(addr) == p.size {
		return nil // not one the pool hands out: the gateway, or outside its range
	}
	mine, err := a.claimKey(ctx, addr.String(), holder, gone)
	if err == nil && !mine {
		err = fmt.Errorf("static address %s is %w", addr, errAddressHeld)
	}
	return err
}

// claimKey claims key for holder, taking it over from a holder that is gone (an interface
// of the same VM renamed); false when another holder has it.
func (a *allocator) claimKey(ctx context.Context, key, holder string, gone func(holder string) bool) (bool, error) {
	for {
		ok, err := a.take(ctx, key, holder)
		if err != nil || ok {
			return ok, err
		}
		e, err := a.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			continue // released meanwhile
		case err != nil:
			return false, fmt.Errorf("read claim %s: %w", key, err)
		case !gone(string(e.Value())):
			return false, nil
		}
		if _, err := a.kv.Update(ctx, key, []byte(holder), e.Revision()); err == nil || !isWrongRevision(err) {
			return err == nil, err // the interface renamed keeps what it held
		}
	}
}

// claimFirst claims for holder the first it can of the n keys key(0) to key(n-1): the one
// at prev first, when it is one of them (prev < n), then those from a hash of holder on,
// wrapping around. It returns the index of the key taken.
func (a *allocator) claimFirst(ctx context.Context, holder string, n uint64, key func(uint64) string, prev uint64) (uint64, error) {
	if prev < n {
		ok, err := a.take(ctx, key(prev), holder)
		if err != nil || ok {
			return prev, err
		}
	}
	h := fnv.New64a()
	h.Write([]byte(holder))
	start := h.Sum64() % n
	for i := range n {
		at := (start + i) % n
		ok, err := a.take(ctx, key(at), holder)
		if err != nil {
			return 0, err
		}
		if ok {
			return at, nil
		}
	}
	return 0, errPoolExhausted
}

// take claims key for holder; false when another holder has it. The claim is recorded
// under the holder's VM first (record), so that release finds the VM's claims with one
// read; a crash between the two leaves a record release skips, never a claim it cannot
// find.
func (a *allocator) take(ctx context.Context, key, holder string) (bool, error) {
	e, err := a.kv.Get(ctx, key)
	switch {
	case err == nil:
		return string(e.Value()) == holder, nil
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return false, fmt.Errorf("read claim %s: %w", key, err)
	}
	uid, _, _ := strings.Cut(holder, "/")
	if err := a.record(ctx, uid, key); err != nil {
		return false, err
	}
	_, err = a.kv.Create(ctx, key, []byte(holder))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongRevision(err) {
		return false, fmt.Errorf("claim %s: %w", key, err)
	}
	return a.take(ctx, key, holder) // claimed meanwhile: by a concurrent reconcile, or another holder
}

// heldPrefix begins the names of the VMs' records of their claims.
const heldPrefix = "held."

// heldKey names the record of the keys the VM uid claimed, one per line.
func heldKey(uid string) string { return heldPrefix + uid }

// record adds key to the VM's record of its claims.
func (a *allocator) record(ctx context.Context, uid, key string) error {
	for {
		e, err := a.kv.Get(ctx, heldKey(uid))
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			_, err = a.kv.Create(ctx, heldKey(uid), []byte(key))
		case err != nil:
		case slices.Contains(strings.Split(string(e.Value()), "\n"), key):
			return nil
		default:
			_, err = a.kv.Update(ctx, heldKey(uid), append(e.Value(), "\n"+key...), e.Revision())
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongRevision(err) {
			return fmt.Errorf("record claim %s of %s: %w", key, uid, err)
		}
	}
}

// release gives up every address held by the VM uid.
func (a *allocator) release(ctx context.Context, uid string) error {
	rec, err := a.kv.Get(ctx, heldKey(uid))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read claims of %s: %w", uid, err)
	}
	for key := range strings.SplitSeq(string(rec.Value()), "\n") {
		e, err := a.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("read claim %s: %w", key, err)
		case strings.HasPrefix(string(e.Value()), uid+"/"):
			err := a.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
			if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !isWrongRevision(err) {
				return fmt.Errorf("release %s: %w", key, err)
			}
		}
	}
	// A claim recorded since the read stays with its record for the next release.
	err = a.kv.Delete(ctx, heldKey(uid), jetstream.LastRevision(rec.Revision()))
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !isWrongRevision(err) {
		return fmt.Errorf("release the claims of %s: %w", uid, err)
	}
	return nil
}

// releaseAddresses gives up the VM uid's address claims (not its MACs) that used does not
// keep: those of an interface removed or renamed, or replaced by another address.
func (a *allocator) releaseAddresses(ctx context.Context, uid string, used func(addr string) bool) error {
	return a.releaseUnused(ctx, uid, isAddressKey, used)
}

// releaseMACs gives up the VM uid's MAC claims that used does not keep: those of adapters
// removed from the VM (mac.go).
func (a *allocator) releaseMACs(ctx context.Context, uid string, used func(key string) bool) error {
	return a.releaseUnused(ctx, uid, func(key string) bool { return !isAddressKey(key) }, used)
}

// isAddressKey tells an address's claim key from a MAC's.
func isAddressKey(key string) bool {
	_, err := netip.ParseAddr(key)
	return err == nil
}

// releaseUnused gives up the VM uid's claims of one kind that used does not keep, and
// drops them from its record.
func (a *allocator) releaseUnused(ctx context.Context, uid string, kind, used func(key string) bool) error {
	for {
		rec, err := a.kv.Get(ctx, heldKey(uid))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read claims of %s: %w", uid, err)
		}
		var kept []string
		for key := range strings.SplitSeq(string(rec.Value()), "\n") {
			if !kind(key) || used(key) {
				kept = append(kept, key)
				continue
			}
			e, err := a.kv.Get(ctx, key)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				// recorded before it is made (take): it may be made yet
				kept = append(kept, key)
				continue
			case err != nil:
				return fmt.Errorf("read claim %s: %w", key, err)
			case !strings.HasPrefix(string(e.Value()), uid+"/"):
				continue // another VM's: the record was left by a claim that lost
			}
			err = a.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
			if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !isWrongRevision(err) {
				return fmt.Errorf("release %s: %w", key, err)
			}
		}
		switch {
		case len(kept) == len(strings.Split(string(rec.Value()), "\n")):
			return nil
		case len(kept) == 0:
			err = a.kv.Delete(ctx, heldKey(uid), jetstream.LastRevision(rec.Revision()))
		default:
			_, err = a.kv.Update(ctx, heldKey(uid), []byte(strings.Join(kept, "\n")), rec.Revision())
		}
		if err == nil {
			return nil
		}
		if !isWrongRevision(err) && !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("record the claims %s keeps: %w", uid, err)
		}
		// claimed meanwhile: read the record again
	}
}

// isWrongRevision: the key changed since it was read (another claim or release got there
// first).
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
