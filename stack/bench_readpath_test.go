package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	readPathVMs     = flag.Int("readpath-vms", 10000, "VirtualMachines in the namespace of BenchmarkReadPath")
	readPathWindow  = flag.Duration("readpath-window", time.Minute, "how long BenchmarkReadPath measures the steady state's CPU")
	readPathProfile = flag.String("readpath-cpuprofile", "", "write the CPU profile of the steady state's window to this file")
)

// readPathShards label the VMs shard=s0..s9, so that one shard is a tenth of them.
const readPathShards = 10

// BenchmarkReadPath measures issue #17's read path with -readpath-vms VirtualMachines in one
// namespace (a class that does not exist, so vCenter does no work): GET latency, a label
// selector LIST of a tenth of them, a LIST of all, a client-go informer's sync, memory per
// 1,000 VMs, and the CPU the whole stack uses once nothing changes.
func BenchmarkReadPath(b *testing.B) {
	for range b.N {
		f := measureReadPath(b, *readPathVMs, *readPathWindow, true)
		b.ReportMetric(ms(f.getP50), "get-p50-ms")
		b.ReportMetric(ms(f.getP99), "get-p99-ms")
		b.ReportMetric(ms(f.labelList), "label-list-ms")
		b.ReportMetric(ms(f.fullList), "full-list-ms")
		b.ReportMetric(ms(f.informerSync), "informer-sync-ms")
		b.ReportMetric(f.steadyCPU*100, "steady-cpu-%core")
		b.ReportMetric(f.rssPer1000, "rss-MB/1000VMs")
		b.ReportMetric(f.heapPer1000, "heap-MB/1000VMs")
		b.Log(f)
	}
}

// TestReadPath runs the read path benchmark's steps with a few VMs, so that make test
// exercises them; it checks what they return, not how fast.
func TestReadPath(t *testing.T) {
	f := measureReadPath(t, 200, 3*time.Second, false)
	t.Log(f)
}

type readPathFigures struct {
	vms                        int
	getP50, getP99             time.Duration
	labelList, fullList        time.Duration // medians
	informerSync               time.Duration
	steadyCPU                  float64    // of one core, every service running, nothing changing
	steadyReconciles           workCounts // a second in the steady state's window, in all and by service and kind
	steadyWindow               time.Duration
	rssPer1000, heapPer1000    float64 // MB
	createRate                 float64 // VMs/s
	labelListed, fullListBytes int
}

func (f readPathFigures) String() string {
	return fmt.Sprintf("%d VMs (created at %.0f/s): GET p50 %v p99 %v; LIST of %d by label %v; LIST of all %v (%d MB);"+
		" informer synced in %v; steady state %.2f%% of one core over %v (%.2f reconciles a second); RSS %.1f MB and Go heap %.1f MB per 1,000 VMs"+
		"\n  reconciles a second in the steady state:\n%s",
		f.vms, f.createRate, f.getP50, f.getP99, f.labelListed, f.labelList, f.fullList, f.fullListBytes>>20,
		f.informerSync, f.steadyCPU*100, f.steadyWindow, f.steadyReconciles["reconciles"], f.rssPer1000, f.heapPer1000,
		f.steadyReconciles.perVM(1))
}

// readPathStack runs roles of one stack in this process, each with its own NATS identity.
type readPathStack struct {
	tb    testing.TB
	env   map[string]string
	mu    sync.Mutex
	stops []func()
}

func newReadPathStack(tb testing.TB) *readPathStack {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	data := tb.TempDir()
	vcsimAddr, natsAddr := eventstest.FreeAddr(tb), eventstest.FreeAddr(tb)
	s := &readPathStack{tb: tb, env: map[string]string{
		"VMOP_DATA":             data,
		"VMOP_ADDR":             eventstest.FreeAddr(tb),
		"VMOP_NATS_ADDR":        natsAddr,
		"VMOP_NATS_URL":         "nats://" + natsAddr,
		"VMOP_VCSIM_ADDR":       vcsimAddr,
		"VMOP_VCENTER_URL":      "https://" + vcsimAddr + "/sdk",
		"VMOP_VCENTER_CA_FILE":  filepath.Join(data, "vcsim", "tls.crt"),
		"VMOP_VCENTER_PASSWORD": "vmop-secret",
		"VMOP_NATS_CA":          filepath.Join(data, "nats", "ca.crt"),
	}}
	tb.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, stop := range slices.Backward(s.stops) {
			stop()
		}
		slog.SetDefault(prev)
	})
	return s
}

func (s *readPathStack) start(role string) {
	env := maps.Clone(s.env)
	env["VMOP_NATS_CREDS"] = filepath.Join(s.env["VMOP_DATA"], "nats", role+".creds")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, role, func(k string) string { return env[k] }) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				s.tb.Errorf("role %s: %v", role, err)
			}
		case <-time.After(time.Minute):
			s.tb.Errorf("role %s did not stop within a minute", role)
		}
	})
}

func (s *readPathStack) waitListening(what, addr string) {
	waitFor(s.tb, 2*time.Minute, what+" listening", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// With awaitResync the steady state is measured once every VM service's resync is under
// way, as it is hours on: the first rounds begin up to 5 minutes after the services start.
func measureReadPath(tb testing.TB, n int, window time.Duration, awaitResync bool) readPathFigures {
	f := readPathFigures{vms: n, steadyWindow: window}
	s := newReadPathStack(tb)
	s.start("nats")
	s.waitListening("nats", s.env["VMOP_NATS_ADDR"])
	s.start("vcsim")
	s.waitListening("vcsim", s.env["VMOP_VCSIM_ADDR"])
	s.start("api")
	kubeconfig := filepath.Join(s.env["VMOP_DATA"], "kubeconfig")
	var api *apiClient
	waitFor(tb, 2*time.Minute, "the gateway serving the seeded inventory", func() bool {
		if api == nil {
			api, _ = newAPIClient(kubeconfig, 16)
		}
		return api != nil && api.ready() // the gateway seeds the inventory from vcsim
	})

	rss, heap := memoryInUse()
	start := time.Now()
	createReadPathVMs(tb, api, n)
	f.createRate = float64(n) / time.Since(start).Seconds()
	rssAfter, heapAfter := memoryInUse()
	thousands := float64(n) / 1000
	f.rssPer1000 = float64(rssAfter-rss) / (1 << 20) / thousands
	f.heapPer1000 = float64(heapAfter-heap) / (1 << 20) / thousands

	settle(tb, api) // the reads are measured on a quiet gateway
	f.getP50, f.getP99 = getLatencies(tb, api, n, 2000)
	var sizes []int
	f.labelList, sizes = listLatency(tb, api, vmsPath+"?labelSelector=shard%3Ds3", 20)
	if want := readPathShardSize(n, 3); sizes[0] != want {
		tb.Fatalf("label selector listed %d VMs, want %d", sizes[0], want)
	}
	f.labelListed = sizes[0]
	f.fullList, sizes = listLatency(tb, api, vmsPath, 5)
	if sizes[0] != n {
		tb.Fatalf("LIST returned %d VMs, want %d", sizes[0], n)
	}
	_, body, _ := api.do("GET", vmsPath, nil)
	f.fullListBytes = len(body)
	f.informerSync = informerSync(tb, kubeconfig, n)

	services := []string{"placement", "power", "storage", "network", "crypto"}
	for _, role := range services {
		s.start(role)
	}
	if awaitResync {
		waitFor(tb, 10*time.Minute, "every VM service's first resync round", func() bool {
			counts := countsSoFar(tb, nil)
			for _, svc := range services {
				if counts["resync rounds "+svc+" virtualmachines"] < 1 {
					return false
				}
			}
			return true
		})
	}
	f.steadyCPU, f.steadyReconciles = steadyCPU(tb, api, window)
	return f
}

// readPathShardSize is how many of n VMs carry shard=s<shard>.
func readPathShardSize(n, shard int) int {
	return n/readPathShards + min(max(n%readPathShards-shard, 0), 1)
}

func readPathVM(name string, shard int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"vmoperator.vmware.com/v1alpha5","kind":"VirtualMachine",
		"metadata":{"name":%q,"namespace":%q,"labels":{"shard":"s%d","app":"readpath"}},
		"spec":{"className":"readpath-no-such-class","imageName":"vmi-0a0044d7c690bcbea","storageClass":"my-storage-class"}}`,
		name, benchNamespace, shard)
}

func createReadPathVMs(tb testing.TB, api *apiClient, n int) {
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				name := fmt.Sprintf("rp-%05d", i)
				code, body, err := api.do("POST", vmsPath, readPathVM(name, i%readPathShards))
				if err != nil || code != http.StatusCreated {
					errs <- fmt.Errorf("create %s: %d %s %v", name, code, body, err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
}

// getLatencies GETs random VMs one after the other and returns the p50 and p99.
func getLatencies(tb testing.TB, api *apiClient, n, gets int) (p50, p99 time.Duration) {
	lat := make([]time.Duration, gets)
	for i := range lat {
		name := fmt.Sprintf("rp-%05d", rand.IntN(n))
		start := time.Now()
		code, body, err := api.do("GET", vmsPath+"/"+name, nil)
		lat[i] = time.Since(start)
		if err != nil || code != http.StatusOK {
			tb.Fatalf("GET %s: %d %s %v", name, code, body, err)
		}
	}
	slices.Sort(lat)
	return lat[gets/2], lat[gets*99/100]
}

// listLatency LISTs path times times and returns the median duration (the whole answer
// read) and how many items each answer held.
func listLatency(tb testing.TB, api *apiClient, path string, times int) (time.Duration, []int) {
	lat := make([]time.Duration, times)
	sizes := make([]int, times)
	for i := range lat {
		start := time.Now()
		code, body, err := api.do("GET", path, nil)
		lat[i] = time.Since(start)
		if err != nil || code != http.StatusOK {
			tb.Fatalf("LIST %s: %d %.200s %v", path, code, body, err)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			tb.Fatal(err)
		}
		sizes[i] = len(list.Items)
	}
	slices.Sort(lat)
	return lat[times/2], sizes
}

// informerSync starts a client-go informer on the namespace's VMs and returns how long it
// took to hold all n.
func informerSync(tb testing.TB, kubeconfig string, n int) time.Duration {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	client := dynamic.NewForConfigOrDie(cfg)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, benchNamespace, nil)
	informer := factory.ForResource(vmResource).Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer func() { cancel(); factory.Shutdown() }()
	start := time.Now()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		tb.Fatalf("informer not synced within 2 minutes: %d objects", len(informer.GetStore().ListKeys()))
	}
	took := time.Since(start)
	if got := len(informer.GetStore().ListKeys()); got != n {
		tb.Fatalf("informer holds %d VMs, want %d", got, n)
	}
	return took
}

// settle waits until the services (those running) and the announcer have handled every
// change: the resourceVersions of the VMs and of the namespace's Events stop moving for a
// while.
func settle(tb testing.TB, api *apiClient) {
	const still = 5 * time.Second
	rvs, since := "", time.Now()
	waitFor(tb, 40*time.Minute, "the stack to settle", func() bool {
		now := listRV(api, vmsPath) + " " + listRV(api, "/api/v1/namespaces/"+benchNamespace+"/events")
		if now != rvs {
			rvs, since = now, time.Now()
		}
		return time.Since(since) >= still
	})
}

// steadyCPU returns the share of one core the process uses over window once the stack
// has settled, and the reconciles it ran a second.
func steadyCPU(tb testing.TB, api *apiClient, window time.Duration) (cpuShare float64, reconciles workCounts) {
	settle(tb, api)
	// The setup's garbage (10,000 creates, the informer's lists) is collected and its memory
	// returned to the OS first: a steady state hours on has long done so, and a collection
	// of it, or the scavenger's returning it, falling into the window is not the steady
	// state's cost. Whatever the steady state allocates is still collected in the window.
	debug.FreeOSMemory()
	if *readPathProfile != "" {
		out, err := os.Create(*readPathProfile)
		if err != nil {
			tb.Fatal(err)
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			tb.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	ran := countsSoFar(tb, nil)
	cpu, start := processCPU(), time.Now()
	<-time.After(window) // the window is a span of time, not a condition: a poll would add its own wake-ups
	cpuShare = float64(processCPU()-cpu) / float64(time.Since(start))
	reconciles = workCounts{}
	for k, v := range countsSoFar(tb, nil).minus(ran) {
		if strings.HasPrefix(k, "reconciles") && v > 0 {
			reconciles[k] = v / time.Since(start).Seconds()
		}
	}
	return cpuShare, reconciles
}

// listRV is the resourceVersion of a one-item page of path's list, "" on failure.
func listRV(api *apiClient, path string) string {
	code, body, err := api.do("GET", path+"?limit=1", nil)
	if err != nil || code != http.StatusOK {
		return ""
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &list) != nil {
		return ""
	}
	return list.Metadata.ResourceVersion
}

// memoryInUse is the process's resident set and live Go heap after a collection.
func memoryInUse() (rss, heap uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, m.HeapAlloc
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, m.HeapAlloc
		}
	}
	return 0, m.HeapAlloc
}
