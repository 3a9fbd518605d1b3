package events

import "github.com/prometheus/client_golang/prometheus"

// The package's metrics, registered by whoever serves them: [Collectors].
var statusPublishes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmop_status_publishes_total",
	Help: "Status slices published, by service, kind and result: stored, or unchanged (the newest slice was the same, nothing written).",
}, []string{"service", "kind", "result"})

// Collectors are the package's metrics.
func Collectors() []prometheus.Collector { return []prometheus.Collector{statusPublishes} }

func countPublish(service, kind string, stored bool) {
	result := "unchanged"
	if stored {
		result = "stored"
	}
	statusPublishes.WithLabelValues(service, kind, result).Inc()
}
