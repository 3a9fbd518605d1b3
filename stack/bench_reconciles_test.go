package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/reconcile"
)

// reconcilesSoFar is how many reconciles every loop of the process has run, of any kind
// and result: what the pipeline spends per VM, whatever each one costs.
func reconcilesSoFar(b testing.TB) float64 {
	b.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(reconcile.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "vmop_reconciles_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}
