package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/vmop/vmop/pkg/events/eventstest"
)

// sampleSum adds the samples of metric whose labels include every one of labels
// (`name="value"`), and tells whether there was any.
func sampleSum(text, metric string, labels ...string) (float64, bool) {
	var sum float64
	found := false
	for _, line := range strings.Split(text, "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || (series != metric && !strings.HasPrefix(series, metric+"{")) {
			continue
		}
		matches := true
		for _, l := range labels {
			matches = matches && strings.Contains(series, l)
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && matches {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The gateway's /metrics and the services' VMOP_METRICS_ADDR listener count what a VM's
// creation did: requests, reconciles, vCenter calls and tasks; the queue and consumer
// gauges and /healthz are there.
func TestMetrics(t *testing.T) {
	metricsAddr := eventstest.FreeAddr(t)
	s := startStackWith(t, map[string]string{"VMOP_METRICS_ADDR": metricsAddr})
	s.applyVM("metrics-vm", "metrics")
	services := "http://" + metricsAddr
	var text string
	s.eventually("placement's reconciles and vCenter task counted", func() bool {
		_, text = get(t, services+"/metrics")
		created, _ := sampleSum(text, "vmop_reconciles_total", `service="placement"`, `kind="virtualmachines"`, `result="success"`)
		tasks, _ := sampleSum(text, "vmop_vcenter_task_duration_seconds_count", `result="success"`)
		return created > 0 && tasks > 0
	})
	for _, m := range []struct {
		metric   string
		labels   []string
		positive bool
	}{
		{"vmop_reconcile_duration_seconds_count", []string{`service="power"`}, true},
		{"vmop_vcenter_calls_total", []string{`result="ok"`}, true},
		{"vmop_vcenter_call_duration_seconds_count", nil, true},
		{"vmop_reconcile_queue_depth", []string{`service="network"`}, false},
		{"vmop_consumer_pending", []string{`service="placement"`, `consumer="`}, false},
	} {
		v, found := sampleSum(text, m.metric, m.labels...)
		if !found || (m.positive && v <= 0) {
			t.Errorf("%s%v: %v (found %v)", m.metric, m.labels, v, found)
		}
	}
	if code, body := get(t, services+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	var stderr bytes.Buffer
	if code := cli(t.Context(), []string{"healthcheck", services + "/healthz"}, func(string) string { return "" }, io.Discard, &stderr); code != 0 {
		t.Errorf("vmop healthcheck: %d %s", code, stderr.String())
	}
	if code := cli(t.Context(), []string{"healthcheck", services + "/nothing"}, func(string) string { return "" }, io.Discard, io.Discard); code == 0 {
		t.Error("vmop healthcheck of a 404 exits 0")
	}

	api, err := newAPIClient(s.kubeconfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	withData := func(k string) string { return map[string]string{"VMOP_DATA": s.data}[k] }
	if code := cli(t.Context(), []string{"healthcheck", api.server + "/healthz"}, withData, io.Discard, &stderr); code != 0 {
		t.Errorf("vmop healthcheck of the API, trusting the stack's CA: %d %s", code, stderr.String())
	}
	code, body, err := api.do("GET", "/metrics", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("gateway /metrics: %d %v %s", code, err, body)
	}
	for _, m := range [][]string{
		{"vmop_api_requests_total", `resource="virtualmachines"`, `code="201"`},
		{"vmop_api_request_duration_seconds_count", `resource="virtualmachines"`},
		{"vmop_api_watches_open"},
		{"vmop_api_readmodel_lag", `stream="STATUS"`},
	} {
		if _, found := sampleSum(string(body), m[0], m[1:]...); !found {
			t.Errorf("gateway /metrics lacks %v", m)
		}
	}
}
