package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	benchNamespace = "my-namespace"
	vmsPath        = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/" + benchNamespace + "/virtualmachines"
	classPath      = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/" + benchNamespace + "/virtualmachineclasses/my-vm-class"
	imagePath      = "/apis/vmoperator.vmware.com/v1alpha5/namespaces/" + benchNamespace + "/virtualmachineimages/vmi-0a0044d7c690bcbea"
)

// benchVM is the seed's vm-example (docs/concepts/workloads/vm-example.yaml) in v1alpha5.
func benchVM(name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":%q,"namespace":%q},
		"spec":{"className":"my-vm-class","imageName":"vmi-0a0044d7c690bcbea","storageClass":"my-storage-class",
			"bootstrap":{"cloudInit":{"cloudConfig":{}}}}}`, name, benchNamespace)
}

// apiClient talks REST to the gateway as the kubeconfig's admin, as kubectl would, minus
// kubectl's start-up cost per call.
type apiClient struct {
	server string
	token  string
	http   *http.Client // requests
	stream *http.Client // watches: no overall timeout
}

func newAPIClient(kubeconfig string, conns int) (*apiClient, error) {
	kc, err := readKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(kc.ca) {
		return nil, errors.New("kubeconfig CA: no certificate")
	}
	c := &apiClient{server: kc.server, token: kc.tokens["admin"]}
	if c.token == "" {
		return nil, errors.New("kubeconfig: no admin token")
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: conns + 2}
	c.http = &http.Client{Transport: transport, Timeout: time.Minute}
	c.stream = &http.Client{Transport: transport}
	return c, nil
}

func (c *apiClient) request(ctx context.Context, client *http.Client, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	return client.Do(req)
}

// do sends one request and returns the status code and body.
func (c *apiClient) do(method, path string, body []byte) (int, []byte, error) {
	resp, err := c.request(context.Background(), c.http, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func (c *apiClient) exists(path string) bool {
	code, _, err := c.do("GET", path, nil)
	return err == nil && code == http.StatusOK
}

// ready reports whether the gateway is ready: caught up with the streams and serving the
// whole seeded inventory.
func (c *apiClient) ready() bool { return c.exists("/readyz") }

// apiRound creates n VMs named <prefix>-<i> through the API, waits until all are
// PoweredOn, deletes them and waits until all are gone.
func (st *benchStack) apiRound(b *testing.B, prefix string, n int) round {
	c := st.api
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code, body, err := c.do("GET", vmsPath, nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("list VMs: %d %s %v", code, body, err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		b.Fatal(err)
	}
	w := newVMWatch(prefix)
	go w.follow(ctx, c, list.Metadata.ResourceVersion)

	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	cpu, reconciles, work := processCPU(), reconcilesSoFar(b), countsSoFar(b, st.nats)
	started := time.Now()
	r := round{n: n}
	posted := make(map[string]time.Time, n)
	var mu sync.Mutex
	parallel(b, names, func(name string) error {
		start := time.Now()
		code, body, err := c.do("POST", vmsPath, benchVM(name))
		if err != nil || code != http.StatusCreated {
			return fmt.Errorf("create %s: %d %s %v", name, code, body, err)
		}
		mu.Lock()
		posted[name] = start
		mu.Unlock()
		if *benchClosedLoop {
			return w.waitOn(name)
		}
		return nil
	})
	on := w.waitAll(b, "PoweredOn", names, func(v *watchedVM) time.Time { return v.on }, c)
	r.create = on.Sub(started)
	r.createCPU = processCPU() - cpu
	r.createReconciles = reconcilesSoFar(b) - reconciles
	r.createWork = countsSoFar(b, st.nats).minus(work)
	for _, name := range names {
		r.toOn = append(r.toOn, w.get(name).on.Sub(posted[name]))
	}

	deleteStart, cpu, reconciles, work := time.Now(), processCPU(), reconcilesSoFar(b), countsSoFar(b, st.nats)
	parallel(b, names, func(name string) error {
		code, body, err := c.do("DELETE", vmsPath+"/"+name, nil)
		if err != nil || (code != http.StatusOK && code != http.StatusAccepted && code != http.StatusNotFound) {
			return fmt.Errorf("delete %s: %d %s %v", name, code, body, err)
		}
		return nil
	})
	gone := w.waitAll(b, "deleted", names, func(v *watchedVM) time.Time { return v.gone }, c)
	r.delete = gone.Sub(deleteStart)
	r.deleteCPU = processCPU() - cpu
	r.deleteReconciles = reconcilesSoFar(b) - reconciles
	r.deleteWork = countsSoFar(b, st.nats).minus(work)
	return r
}

// parallel runs f on every name, benchConcurrency at a time, and fails on the first error.
func parallel(b *testing.B, names []string, f func(string) error) {
	b.Helper()
	work := make(chan string)
	errs := make(chan error, len(names))
	var wg sync.WaitGroup
	for range benchConcurrency {
		wg.Go(func() {
			for name := range work {
				if err := f(name); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// watchedVM is when the watch first saw a VM powered on and gone.
type watchedVM struct {
	on, gone time.Time
	last     json.RawMessage // the newest object seen, to explain a timeout
}

// vmWatch follows the VMs of a round through one API watch (re-established from the last
// resourceVersion when the server ends it).
type vmWatch struct {
	prefix  string
	mu      sync.Mutex
	vms     map[string]*watchedVM
	changed chan struct{} // closed and replaced on every change
	err     error
}

func newVMWatch(prefix string) *vmWatch {
	return &vmWatch{prefix: prefix + "-", vms: map[string]*watchedVM{}, changed: make(chan struct{})}
}

func (w *vmWatch) follow(ctx context.Context, c *apiClient, rv string) {
	for ctx.Err() == nil {
		next, err := w.once(ctx, c, rv)
		if err != nil && ctx.Err() == nil {
			w.mu.Lock()
			w.err = err
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			return
		}
		rv = next
	}
}

// once runs one watch request from rv and returns the last resourceVersion it saw.
func (w *vmWatch) once(ctx context.Context, c *apiClient, rv string) (string, error) {
	resp, err := c.request(ctx, c.stream, "GET", vmsPath+"?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, nil)
	if err != nil {
		return rv, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return rv, fmt.Errorf("watch: %d %s", resp.StatusCode, body)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return rv, nil
			}
			return rv, fmt.Errorf("watch: %w", err)
		}
		now := time.Now()
		var obj struct {
			Metadata struct {
				Name            string `json:"name"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Status struct {
				PowerState string `json:"powerState"`
			} `json:"status"`
		}
		if err := json.Unmarshal(ev.Object, &obj); err != nil {
			return rv, fmt.Errorf("watch event: %w", err)
		}
		if ev.Type == "ERROR" {
			return rv, fmt.Errorf("watch error: %s", ev.Object)
		}
		rv = obj.Metadata.ResourceVersion
		if ev.Type == "BOOKMARK" || !strings.HasPrefix(obj.Metadata.Name, w.prefix) {
			continue
		}
		w.mu.Lock()
		v := w.vms[obj.Metadata.Name]
		if v == nil {
			v = &watchedVM{}
			w.vms[obj.Metadata.Name] = v
		}
		v.last = ev.Object
		if v.on.IsZero() && obj.Status.PowerState == "PoweredOn" {
			v.on = now
		}
		if ev.Type == "DELETED" && v.gone.IsZero() {
			v.gone = now
		}
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
}

func (w *vmWatch) get(name string) watchedVM {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v := w.vms[name]; v != nil {
		return *v
	}
	return watchedVM{}
}

// waitAll waits until at(vm) is set for every name and returns the latest of those times.
// On timeout it fails with the state of a VM that did not get there.
func (w *vmWatch) waitAll(b *testing.B, what string, names []string, at func(*watchedVM) time.Time, c *apiClient) time.Time {
	b.Helper()
	deadline := time.NewTimer(*benchTimeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		var latest time.Time
		missing, err, changed := "", w.err, w.changed
		count := 0
		for _, name := range names {
			v := w.vms[name]
			if v == nil || at(v).IsZero() {
				if missing == "" {
					missing = name
				}
				continue
			}
			count++
			if t := at(v); t.After(latest) {
				latest = t
			}
		}
		w.mu.Unlock()
		switch {
		case err != nil:
			b.Fatalf("waiting for %s: %v", what, err)
		case missing == "":
			return latest
		}
		select {
		case <-changed:
		case <-deadline.C:
			_, body, _ := c.do("GET", vmsPath+"/"+missing, nil)
			b.Fatalf("after %v, %d of %d VMs %s; %s is at:\n%s\n%s", *benchTimeout, count, len(names), what, missing, body, dumpGoroutines())
		}
	}
}

// waitOn waits until the watch saw the VM powered on (a closed-loop worker's wait).
func (w *vmWatch) waitOn(name string) error {
	deadline := time.NewTimer(*benchTimeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		v, err, changed := w.vms[name], w.err, w.changed
		on := v != nil && !v.on.IsZero()
		w.mu.Unlock()
		switch {
		case err != nil:
			return fmt.Errorf("waiting for %s to power on: %w", name, err)
		case on:
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("%s not PoweredOn after %v", name, *benchTimeout)
		}
	}
}

// dumpGoroutines writes every goroutine's stack to a file, for a round that stalled, and
// says where.
func dumpGoroutines() string {
	f, err := os.CreateTemp("", "vmop-bench-goroutines-*.txt")
	if err != nil {
		return "goroutines not dumped: " + err.Error()
	}
	defer f.Close()
	if err := pprof.Lookup("goroutine").WriteTo(f, 2); err != nil {
		return "goroutines not dumped: " + err.Error()
	}
	return "goroutines: " + f.Name()
}
