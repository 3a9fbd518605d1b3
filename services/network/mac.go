package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// MAC addresses. An adapter the service adds gets a MAC address from VMware's range for
// addresses assigned by hand, 00:50:56:00:00:00 to 00:50:56:3f:ff:ff (vCenter generates
// its own outside it), claimed like an IP address (ipam.go) by "<vm uid>/<interface
// name>" under the key of the MAC spelled with dashes. Knowing the MAC before the
// adapter exists lets the cloud-init network config, which names the guest's interfaces
// by MAC, be written in the reconfigure that adds the adapter rather than in a second
// one after vCenter has made the MAC up. The claim goes once the reconfigure that removes
// the adapter succeeded (releaseMACs), or with the VM.

// macRange is the number of MACs in the range.
const macRange = 1 << 22

// macAt is the i-th MAC of the range.
func macAt(i uint64) string {
	return fmt.Sprintf("00:50:56:%02x:%02x:%02x", byte(i>>16)&0x3f, byte(i>>8), byte(i))
}

// macIndex is the position of mac in the range; macRange when it is outside it.
func macIndex(mac string) uint64 {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 || hw[0] != 0x00 || hw[1] != 0x50 || hw[2] != 0x56 || hw[3] > 0x3f {
		return macRange
	}
	return uint64(hw[3])<<16 | uint64(hw[4])<<8 | uint64(hw[5])
}

// macKey is the claim key of a MAC: keys cannot hold colons.
func macKey(mac string) string { return strings.ReplaceAll(mac, ":", "-") }

// claimMAC returns the MAC of the holder, trying prev (the MAC its adapter had, if any)
// first.
func (a *allocator) claimMAC(ctx context.Context, holder, prev string) (string, error) {
	i, err := a.claimFirst(ctx, holder, macRange, func(i uint64) string { return macKey(macAt(i)) }, macIndex(prev))
	if errors.Is(err, errPoolExhausted) {
		return "", fmt.Errorf("%w: MAC range 00:50:56:00:00:00-3f:ff:ff", err)
	}
	return macAt(i), err
}
