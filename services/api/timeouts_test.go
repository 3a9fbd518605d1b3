package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vmop/vmop/services/api"
)

// A watch outlives the server's request timeout, over HTTP/1.1 and HTTP/2 (kubectl's):
// it delivers a change made after the timeout and ends at its own timeoutSeconds.
func TestWatchOutlivesTheRequestTimeout(t *testing.T) {
	const timeout = time.Second
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) { c.RequestTimeout = timeout })
	for _, h2 := range []bool{false, true} {
		client := httpsClient(t, g.certs.CAFile)
		client.Timeout = 0
		client.Transport.(*http.Transport).ForceAttemptHTTP2 = h2
		code, list := g.do("GET", classes, adminToken, nil)
		if code != http.StatusOK {
			t.Fatalf("list: %d %s", code, list)
		}
		rv := field(decode(t, list), "metadata", "resourceVersion").(string)
		req, err := http.NewRequest("GET", g.URL+classes+"?watch=true&timeoutSeconds=4&resourceVersion="+rv, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
			t.Fatalf("watch: %d over %s", resp.StatusCode, resp.Proto)
		}
		// What is tested is the time that passes: longer than the request timeout.
		time.Sleep(2 * timeout)
		name := "after-timeout-" + resp.Proto[len(resp.Proto)-1:]
		body := strings.Replace(seedClass, "name: my-vm-class", "name: "+name, 1)
		// The list's connection has been idle as long as the server's idle timeout (twice
		// the request timeout): the server may close it just as the POST is sent on it.
		g.client.CloseIdleConnections()
		if code, resp := g.do("POST", classes, adminToken, body, "Content-Type", "application/yaml"); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, resp)
		}
		var ev watchEvent
		if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil || ev.Type != "ADDED" || field(ev.Object, "metadata", "name") != name {
			t.Errorf("%s: event after the request timeout = %+v, %v; want %s ADDED", resp.Proto, ev, err, name)
		}
		rest, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		resp.Body.Close()
		if err != nil || len(rest) != 0 || took < 4*time.Second || took > 8*time.Second {
			t.Errorf("%s: watch ended after %v with %q, %v; want a clean end at its timeoutSeconds (4s)", resp.Proto, took, rest, err)
		}
	}
}

// A client that sends its request slowly is cut off after the request timeout; it
// holds no connection for ever.
func TestSlowRequestIsCutOff(t *testing.T) {
	const timeout = time.Second
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) { c.RequestTimeout = timeout })
	ca, err := os.ReadFile(g.certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	for name, partial := range map[string]string{
		"headers": "POST " + classes + " HTTP/1.1\r\nHost: x\r\n",
		"body":    "POST " + classes + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + adminToken + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
	} {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(g.URL, "https://"), &tls.Config{RootCAs: pool})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := io.WriteString(conn, partial); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(conn) // whatever the server answers, until it closes
		took := time.Since(start)
		conn.Close()
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() || took > 5*timeout {
			t.Errorf("partial %s: the server held the connection for %v (%v), want it closed after about %v", name, took, err, timeout)
		}
	}
}

// A user may hold MaxWatchesPerUser watches open; one more is 429 with a Status and a
// Retry-After, while other users still watch, and closing one makes room again.
func TestWatchesPerUserAreLimited(t *testing.T) {
	g := startGatewayWith(t, newStreams(t), t.TempDir(), func(c *api.Config) { c.MaxWatchesPerUser = 2 })
	client := *g.client
	client.Timeout = 0
	open := func(token string) (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, "GET", g.URL+vms+"?watch=true", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp, cancel
	}
	first, closeFirst := open(userToken)
	second, _ := open(userToken)
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("two watches: %d, %d", first.StatusCode, second.StatusCode)
	}
	third, _ := open(userToken)
	body, _ := io.ReadAll(third.Body)
	if third.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"reason":"TooManyRequests"`) {
		t.Errorf("third watch: %d %s, want 429 with a Status", third.StatusCode, body)
	}
	if after := third.Header.Get("Retry-After"); after != "1" {
		t.Errorf("third watch: Retry-After %q, want 1 (the Status's retryAfterSeconds), which client-go waits before asking again", after)
	}
	if other, _ := open(adminToken); other.StatusCode != http.StatusOK {
		t.Errorf("another user's watch: %d, want 200", other.StatusCode)
	}
	closeFirst()
	eventually(t, "room for a watch once one closed", func() bool {
		resp, cancel := open(userToken)
		defer func() {
			if resp.StatusCode != http.StatusOK {
				cancel()
			}
		}()
		return resp.StatusCode == http.StatusOK
	})
}

// timeoutSeconds=0 is the server's default, as in kube-apiserver (client-go may send it):
// the watch stays open and delivers a change made after it began.
func TestWatchWithTimeoutZeroStaysOpen(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	code, list := g.do("GET", classes, adminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, list)
	}
	rv := field(decode(t, list), "metadata", "resourceVersion").(string)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", g.URL+classes+"?watch=true&timeoutSeconds=0&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	client := httpsClient(t, g.certs.CAFile)
	client.Timeout = 0
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := strings.Replace(seedClass, "name: my-vm-class", "name: made-while-watched", 1)
	if code, resp := g.do("POST", classes, adminToken, body, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	var ev watchEvent
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil || ev.Type != "ADDED" || field(ev.Object, "metadata", "name") != "made-while-watched" {
		t.Errorf("watch with timeoutSeconds=0: event %+v, %v; want made-while-watched ADDED", ev, err)
	}
}
