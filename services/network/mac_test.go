package network

import "testing"

func TestMACRange(t *testing.T) {
	for _, tt := range []struct {
		i    uint64
		want string
	}{{0, "00:50:56:00:00:00"}, {0x0a1b2c, "00:50:56:0a:1b:2c"}, {macRange - 1, "00:50:56:3f:ff:ff"}} {
		if got := macAt(tt.i); got != tt.want || macIndex(got) != tt.i {
			t.Errorf("macAt(%#x) = %s (index %#x), want %s", tt.i, got, macIndex(got), tt.want)
		}
	}
	for _, outside := range []string{"", "junk", "00:50:56:40:00:00", "00:50:56:80:12:34", "00:0c:29:64:65:35", "00:50:56:00:00:00:00:00"} {
		if i := macIndex(outside); i != macRange {
			t.Errorf("macIndex(%q) = %#x, want macRange: not a MAC set by hand", outside, i)
		}
	}
	if got := macIndex("00:50:56:0A:1B:2C"); got != 0x0a1b2c {
		t.Errorf("macIndex of upper case = %#x", got)
	}
}

// A holder gets the same MAC every time (a redelivery, a restart), another holder another
// one; an adapter's previous MAC is kept while the holder can claim it.
func TestClaimMAC(t *testing.T) {
	kv := ipamBucket(t)
	a := &allocator{kv: kv}
	ctx := t.Context()
	first, err := a.claimMAC(ctx, holder("vm-a", "eth0"), "")
	if err != nil || macIndex(first) == macRange {
		t.Fatalf("claimMAC = %q, %v; want a MAC of the range", first, err)
	}
	if again, err := a.claimMAC(ctx, holder("vm-a", "eth0"), ""); err != nil || again != first {
		t.Errorf("second claim = %s, %v; want %s again", again, err, first)
	}
	other, err := a.claimMAC(ctx, holder("vm-b", "eth0"), first)
	if err != nil || other == first || macIndex(other) == macRange {
		t.Errorf("claim of another holder offered %s = %s, %v; want another MAC of the range", first, other, err)
	}
	prev := macAt(42)
	if got, err := a.claimMAC(ctx, holder("vm-c", "eth0"), prev); err != nil || got != prev {
		t.Errorf("claim with previous %s = %s, %v; want the previous MAC", prev, got, err)
	}
	if got, err := a.claimMAC(ctx, holder("vm-d", "eth0"), "00:0c:29:64:65:35"); err != nil || macIndex(got) == macRange {
		t.Errorf("claim with a generated previous MAC = %s, %v; want one of the range", got, err)
	}
	if err := a.release(ctx, "vm-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, macKey(first)); err == nil {
		t.Errorf("MAC %s still claimed after vm-a released its addresses", first)
	}
}
