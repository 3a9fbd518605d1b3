package vcenter

import (
	"context"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The package's metrics, registered by whoever serves them: [Collectors].
var (
	calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmop_vcenter_calls_total", Help: "SOAP calls to vCenter, by client (the service), method and result (ok, fault, error).",
	}, []string{"client", "method", "result"})
	callDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vmop_vcenter_call_duration_seconds", Help: "How long SOAP calls to vCenter took, by method.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method"})
	taskDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vmop_vcenter_task_duration_seconds", Help: "How long vCenter tasks ran (vCenter's start to completion), by task and result.",
		Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900},
	}, []string{"task", "result"})
)

// Collectors are the package's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{calls, callDuration, taskDuration}
}

// measureCalls counts each SOAP call of client and its duration by method.
type measureCalls struct {
	client string
	next   soap.RoundTripper
}

func (m measureCalls) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	method := strings.TrimSuffix(reflect.Indirect(reflect.ValueOf(req)).Type().Name(), "Body")
	start := time.Now()
	err := m.next.RoundTrip(ctx, req, res)
	callDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
	result := "ok"
	switch {
	case soap.IsSoapFault(err) || soap.IsVimFault(err):
		result = "fault" // vCenter answered, refusing
	case err != nil:
		result = "error" // no answer: the connection, TLS, a timeout
	}
	calls.WithLabelValues(m.client, method, result).Inc()
	return err
}

// observeTask records a finished task's duration as vCenter timed it.
func observeTask(info *types.TaskInfo) {
	start := info.QueueTime
	if info.StartTime != nil {
		start = *info.StartTime
	}
	end := time.Now()
	if info.CompleteTime != nil {
		end = *info.CompleteTime
	}
	name := info.DescriptionId
	if name == "" {
		name = info.Name
	}
	taskDuration.WithLabelValues(name, string(info.State)).Observe(max(end.Sub(start), 0).Seconds())
}
