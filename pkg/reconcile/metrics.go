package reconcile

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmop/vmop/pkg/events"
)

// The package's metrics, registered by whoever serves them: [Collectors].
var (
	reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmop_reconciles_total", Help: "Reconciles, by service, kind and result (success, error).",
	}, []string{"service", "kind", "result"})
	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vmop_reconcile_duration_seconds", Help: "How long reconciles took, by service and kind.",
		Buckets: prometheus.DefBuckets,
	}, []string{"service", "kind"})
	queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmop_reconcile_queue_depth", Help: "Reconciles running or waiting, by service and kind.",
	}, []string{"service", "kind"})
	consumerPending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmop_consumer_pending", Help: "Messages a service's consumer has yet to receive (its lag), by service and consumer.",
	}, []string{"service", "consumer"})
	resyncRounds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmop_resync_rounds_total", Help: "Resync rounds begun, by service and kind.",
	}, []string{"service", "kind"})
	resyncIdle = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmop_resync_idle_objects", Help: "Objects the current resync round passes over as idle, by service and kind.",
	}, []string{"service", "kind"})
)

// Collectors are the package's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{reconciles, reconcileDuration, queueDepth, consumerPending, unconcerned, resyncRounds, resyncIdle}
}

// sampleInterval is how often a loop samples its queue depth and its consumers' lag.
const sampleInterval = 5 * time.Second

// observeReconcile counts a reconcile that started at start and ended with *err.
func observeReconcile(service, kind string, start time.Time, err *error) {
	result := "success"
	if *err != nil {
		result = "error"
	}
	reconciles.WithLabelValues(service, kind, result).Inc()
	reconcileDuration.WithLabelValues(service, kind).Observe(time.Since(start).Seconds())
}

// sample records the loop's queue depth and its consumers' pending messages until ctx
// ends: a consumer not created yet is sampled next time.
func (l *loop) sample(ctx context.Context) error {
	streams := map[string]string{l.consumer(""): events.StreamSpecs, l.consumer(inputsSuffix): events.StreamStatus,
		l.consumer(relatedSuffix): events.StreamSpecs}
	tick := time.NewTicker(sampleInterval)
	defer tick.Stop()
	for {
		queueDepth.WithLabelValues(l.cfg.Service, l.cfg.Plural).Set(float64(l.q.Len()))
		for _, name := range Consumers(l.cfg) {
			if c, err := l.js.Consumer(ctx, streams[name], name); err == nil {
				consumerPending.WithLabelValues(l.cfg.Service, name).Set(float64(c.CachedInfo().NumPending))
			} else if ctx.Err() == nil {
				l.cfg.Logger.Debug("sample consumer", "service", l.cfg.Service, "consumer", name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
