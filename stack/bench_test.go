package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vmop/vmop/pkg/events/eventstest"
	vmopvc "github.com/vmop/vmop/pkg/vcenter"
)

// Benchmark settings: `go test -run '^$' -bench Pipeline -vms 50 ./stack` (make bench runs
// every module's benchmarks with the defaults).
var (
	benchVMs     = flag.Int("vms", 200, "VirtualMachines per round of BenchmarkPipeline")
	benchRounds  = flag.Int("rounds", 3, "rounds of each path per iteration of BenchmarkPipeline")
	benchTimeout = flag.Duration("vms-timeout", 10*time.Minute, "how long BenchmarkPipeline waits for a round's VMs")
	// benchClosedLoop compares latency at equal load: each API worker waits for its VM, as
	// each direct worker always does (createAndPowerOn returns once the VM runs).
	benchClosedLoop = flag.Bool("closed-loop", false, "BenchmarkPipeline's API workers each wait for their VM to be PoweredOn before the next POST")
)

// benchConcurrency is how many VMs are in flight at once on both paths: the worker count
// of every VM service, so the direct path gets the parallelism the pipeline has.
const benchConcurrency = 8

// BenchmarkPipeline measures the whole pipeline against the work it stands for. One round
// creates -vms VirtualMachines through the API (the seed's vm-example in my-namespace) and
// waits until every one reports PoweredOn, then deletes them and waits until they are gone;
// then it does the same to vcsim directly with govmomi (deploy from the content library
// with the class's CPUs and memory, power on; power off, destroy) at the same concurrency,
// against the same vcsim. Rounds of the two paths alternate, -rounds of each per iteration,
// and the figures are over all of them (a single round varies by ±15% on 2 cores): both
// throughputs, their ratio and the latency from POST to PoweredOn.
func BenchmarkPipeline(b *testing.B) {
	n := *benchVMs
	st := startBenchStack(b)
	direct := connectDirect(b, st.vcenter)
	b.ResetTimer()
	var api, raw round
	rounds := 0
	for i := range b.N {
		for j := range *benchRounds {
			api.add(st.apiRound(b, fmt.Sprintf("bench-%d-%d", i, j), n))
			raw.add(direct.round(b, fmt.Sprintf("direct-%d-%d", i, j), n))
			rounds++
		}
	}
	b.StopTimer()

	createRatio := api.createRate() / raw.createRate()
	deleteRatio := api.deleteRate() / raw.deleteRate()
	b.ReportMetric(api.createRate(), "api-create-VMs/s")
	b.ReportMetric(raw.createRate(), "direct-create-VMs/s")
	b.ReportMetric(createRatio, "create-ratio")
	b.ReportMetric(api.deleteRate(), "api-delete-VMs/s")
	b.ReportMetric(raw.deleteRate(), "direct-delete-VMs/s")
	b.ReportMetric(deleteRatio, "delete-ratio")
	b.ReportMetric(cpuPerVM(api.createCPU, api.n), "api-create-cpu-ms/VM")
	b.ReportMetric(cpuPerVM(raw.createCPU, raw.n), "direct-create-cpu-ms/VM")
	b.ReportMetric(ms(api.percentile(0.50)), "p50-ms")
	b.ReportMetric(ms(api.percentile(0.99)), "p99-ms")
	loop := "open loop"
	if *benchClosedLoop {
		loop = "closed loop"
	}
	b.ReportMetric(ms(raw.percentile(0.50)), "direct-p50-ms")
	b.ReportMetric(ms(raw.percentile(0.99)), "direct-p99-ms")
	b.ReportMetric(cpuPerVM(api.createCPU, api.n)/cpuPerVM(raw.createCPU, raw.n), "create-cpu-ratio")
	b.ReportMetric(api.createReconciles/float64(api.n), "api-create-reconciles/VM")
	b.Logf("%d VMs a round, %d at a time (API %s), %d rounds of each path\n"+
		"  create and power on:  API %6.1f VMs/s (%v)   direct %6.1f VMs/s (%v)   API/direct %.2f\n"+
		"  power off and delete: API %6.1f VMs/s (%v)   direct %6.1f VMs/s (%v)   API/direct %.2f\n"+
		"  to PoweredOn:         API p50 %v p99 %v   direct p50 %v p99 %v\n"+
		"  CPU per VM (create):  API %.0f ms   direct %.0f ms;  (delete): API %.0f ms   direct %.0f ms\n"+
		"  reconciles per VM:    create %.1f   delete %.1f\n"+
		"  per VM (create):\n%s\n  per VM (delete):\n%s",
		n, benchConcurrency, loop, rounds,
		api.createRate(), api.create.Round(time.Millisecond), raw.createRate(), raw.create.Round(time.Millisecond), createRatio,
		api.deleteRate(), api.delete.Round(time.Millisecond), raw.deleteRate(), raw.delete.Round(time.Millisecond), deleteRatio,
		api.percentile(0.50).Round(time.Millisecond), api.percentile(0.99).Round(time.Millisecond),
		raw.percentile(0.50).Round(time.Millisecond), raw.percentile(0.99).Round(time.Millisecond),
		cpuPerVM(api.createCPU, api.n), cpuPerVM(raw.createCPU, raw.n), cpuPerVM(api.deleteCPU, api.n), cpuPerVM(raw.deleteCPU, raw.n),
		api.createReconciles/float64(api.n), api.deleteReconciles/float64(api.n),
		api.createWork.perVM(api.n), api.deleteWork.perVM(api.n))
}

// round is what one path measured for n VMs, or the sum of several rounds (add).
type round struct {
	n      int
	create time.Duration   // first create started → last VM powered on
	delete time.Duration   // first delete started → last VM gone
	toOn   []time.Duration // per VM: its create started → it was seen powered on
	// CPU time the whole process (the stack and vcsim included) spent on each phase: how
	// much of the two cores a path needs, whatever it waits for.
	createCPU, deleteCPU time.Duration
	// Reconciles the process ran in each phase (the API path's; 0 for the direct path).
	createReconciles, deleteReconciles float64
	// What the pipeline did in each phase (the API path's), summed over rounds.
	createWork, deleteWork workCounts
}

// add counts another round of the same path in r.
func (r *round) add(o round) {
	r.n += o.n
	r.create += o.create
	r.delete += o.delete
	r.toOn = append(r.toOn, o.toOn...)
	r.createCPU += o.createCPU
	r.deleteCPU += o.deleteCPU
	r.createReconciles += o.createReconciles
	r.deleteReconciles += o.deleteReconciles
	r.createWork = r.createWork.plus(o.createWork)
	r.deleteWork = r.deleteWork.plus(o.deleteWork)
}

// processCPU is the user and system CPU time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerVM is the CPU milliseconds a phase took per VM.
func cpuPerVM(cpu time.Duration, n int) float64 { return ms(cpu) / float64(n) }

func (r round) createRate() float64 { return float64(r.n) / r.create.Seconds() }
func (r round) deleteRate() float64 { return float64(r.n) / r.delete.Seconds() }

// percentile is the nearest-rank percentile p (0..1] of the latencies to PoweredOn.
func (r round) percentile(p float64) time.Duration {
	if len(r.toOn) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(r.toOn))
	return sorted[max(int(math.Ceil(p*float64(len(sorted))))-1, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchStack is `vmop all` running in the benchmark process.
type benchStack struct {
	api     *apiClient
	vcenter vmopvc.Endpoint
	nats    jetstream.JetStream // as the admin: the streams' and the account's counters
}

// startBenchStack runs the stack on free ports, with vcsim at a known address so the
// direct path reaches the same vCenter, and waits until the seeded inventory is served.
// Logs below errors are dropped: they would drown the figures.
func startBenchStack(b *testing.B) *benchStack {
	b.Helper()
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	b.Cleanup(func() { slog.SetDefault(prev) })

	data := b.TempDir()
	vcsimAddr := eventstest.FreeAddr(b)
	env := map[string]string{
		"VMOP_DATA":       data,
		"VMOP_ADDR":       eventstest.FreeAddr(b),
		"VMOP_NATS_ADDR":  eventstest.FreeAddr(b),
		"VMOP_VCSIM_ADDR": vcsimAddr,
	}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, "all", func(k string) string { return env[k] }) }()
	b.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("stack: %v", err)
			}
		case <-time.After(time.Minute):
			b.Errorf("stack did not stop within a minute")
		}
	})
	kubeconfig := filepath.Join(data, "kubeconfig")
	var api *apiClient
	waitFor(b, 2*time.Minute, "the seeded inventory served", func() bool {
		select {
		case err := <-done:
			b.Fatalf("stack stopped: %v", err)
		default:
		}
		if api == nil {
			if api, err = newAPIClient(kubeconfig, benchConcurrency); err != nil {
				return false
			}
		}
		return api.ready()
	})
	dir := filepath.Join(data, "nats")
	nc, err := nats.Connect("nats://"+env["VMOP_NATS_ADDR"], nats.UserCredentials(filepath.Join(dir, adminIdentity+".creds")),
		nats.RootCAs(filepath.Join(dir, "ca.crt")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	return &benchStack{api: api, nats: js, vcenter: vmopvc.Endpoint{
		URL:    &url.URL{Scheme: "https", Host: vcsimAddr, Path: "/sdk", User: url.UserPassword(cfg.VCenterUser, cfg.VCenterPassword)},
		CAFile: vcsimCertFile(cfg),
	}}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(b testing.TB, timeout time.Duration, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond) // poll interval of a condition with a deadline
	}
}
