package network

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vmop/vmop/pkg/model"
)

// A TCP probe to an address that never answers gives up after the probe's timeout: it
// cannot hold a reconcile worker for the kernel's connect timeout.
func TestTCPProbeTimesOut(t *testing.T) {
	port := blackHole(t)
	p := &model.VirtualMachineReadinessProbeSpec{
		TCPSocket:      &model.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(port))},
		TimeoutSeconds: 1,
	}
	start := time.Now()
	status, msg := probeTCP(t.Context(), p, &model.VirtualMachineNetworkStatus{})
	took := time.Since(start)
	if status != metav1.ConditionFalse || !strings.Contains(msg, "timeout") {
		t.Errorf("probe = %s %q, want False after a timeout", status, msg)
	}
	if took < time.Second || took > 3*time.Second {
		t.Errorf("the probe took %v, want its 1s timeout", took)
	}
}

func TestProbeTimeout(t *testing.T) {
	for _, tc := range []struct {
		seconds int32
		want    time.Duration
	}{{0, 10 * time.Second}, {1, time.Second}, {60, time.Minute}} {
		if got := probeTimeout(&model.VirtualMachineReadinessProbeSpec{TimeoutSeconds: tc.seconds}); got != tc.want {
			t.Errorf("timeoutSeconds %d: timeout %v, want %v", tc.seconds, got, tc.want)
		}
	}
}

// blackHole is a loopback port whose SYNs the kernel drops: a listener that never
// accepts, its accept queue (backlog 0) filled, the way a black-holed address behaves.
func blackHole(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 8 { // fill the queue until a connection hangs
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		cancel()
		if err != nil {
			return sa.(*syscall.SockaddrInet4).Port
		}
		t.Cleanup(func() { _ = conn.Close() })
	}
	t.Fatal("the listener's accept queue never filled")
	return 0
}
