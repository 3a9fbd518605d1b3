package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/events"

	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// reconcilesSoFar is how many reconciles every loop of the process has run, of any kind
// and result: what the pipeline spends per VM, whatever each one costs.
func reconcilesSoFar(b testing.TB) float64 {
	b.Helper()
	return countsSoFar(b, nil)["reconciles"]
}

// workCounts is what the pipeline did so far, by what: reconciles and unconcerned ones
// by service, vCenter calls by client, writes to each stream (the lease buckets'
// included) and JetStream API requests. Two of them subtracted say where a phase's work
// went.
type workCounts map[string]float64

// countsSoFar reads the process's counters and, given a JetStream connection, the
// streams' last sequences and the account's API request count.
func countsSoFar(b testing.TB, js jetstream.JetStream) workCounts {
	b.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(reconcile.Collectors()...)
	reg.MustRegister(vcenter.Collectors()...)
	reg.MustRegister(events.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	c := workCounts{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetCounter().GetValue()
			switch f.GetName() {
			case "vmop_reconciles_total":
				c["reconciles"] += v
				c["reconciles "+labels["service"]] += v
				c["reconciles "+labels["service"]+" "+labels["kind"]] += v
				if labels["result"] != "success" {
					c["reconciles failed "+labels["service"]] += v
				}
			case "vmop_reconciles_unconcerned_total":
				c["unconcerned "+labels["service"]] += v
			case "vmop_resync_rounds_total":
				c["resync rounds "+labels["service"]+" "+labels["kind"]] += v
			case "vmop_status_publishes_total":
				c["status "+labels["result"]+" "+labels["service"]] += v
			case "vmop_vcenter_calls_total":
				c["vcenter calls"] += v
				if client := labels["client"]; client != "" {
					c["vcenter calls "+client] += v
					c["vcenter calls "+client+" "+labels["method"]] += v
				}
			}
		}
	}
	if js == nil {
		return c
	}
	ctx := context.Background()
	for name := range js.StreamNames(ctx).Name() {
		s, err := js.Stream(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		c["writes "+name] = float64(s.CachedInfo().State.LastSeq)
	}
	// Dead letters by advisory and consumer: each is a message a service gave up on.
	dead, err := js.Stream(ctx, events.StreamDeadLetter)
	if err != nil {
		b.Fatal(err)
	}
	info, err := dead.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		b.Fatal(err)
	}
	for subj, n := range info.State.Subjects {
		c["dead letters "+strings.TrimPrefix(subj, "$JS.EVENT.ADVISORY.CONSUMER.")] = float64(n)
	}
	account, err := js.AccountInfo(ctx)
	if err != nil {
		b.Fatal(err)
	}
	c["jetstream API requests"] = float64(account.API.Total)
	return c
}

// minus is what happened since before.
func (c workCounts) minus(before workCounts) workCounts {
	d := workCounts{}
	for k, v := range c {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// plus is the sum of two phases' counts.
func (c workCounts) plus(o workCounts) workCounts {
	sum := maps.Clone(o)
	if sum == nil {
		sum = workCounts{}
	}
	for k, v := range c {
		sum[k] += v
	}
	return sum
}

// perVM lists the counts per VM of n, a line each.
func (c workCounts) perVM(n int) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		lines = append(lines, fmt.Sprintf("    %-40s %7.1f", k, c[k]/float64(n)))
	}
	return strings.Join(lines, "\n")
}
