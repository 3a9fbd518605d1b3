package eventstest

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// Ports a test listens on come from below Linux's ephemeral range (32768–60999 by
// default): a port the kernel handed out for ":0" is free only until it is closed, and
// the kernel hands the same range to outgoing connections, so under load another
// connection could take it before the server binds it ("address already in use").
const (
	testPortLow  = 20000
	testPortHigh = 32000
)

// FreeAddr is a 127.0.0.1 address whose port nothing listens on now, for a server the
// test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 1000 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testPortLow+rand.IntN(testPortHigh-testPortLow)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr
	}
	t.Fatalf("no free port in %d-%d", testPortLow, testPortHigh)
	return ""
}

// FreePort is FreeAddr's port.
func FreePort(t testing.TB) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	p, _ := strconv.Atoi(port)
	return p
}
