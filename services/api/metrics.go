package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api/readmodel"
)

// metrics are the gateway's Prometheus metrics, on a registry of its own served at
// /metrics to privileged users (as kube-apiserver serves its /metrics to those allowed).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(js jetstream.JetStream, rm *readmodel.Store, watches *watchLimit) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmop_api_requests_total", Help: "Requests answered, by verb, resource and HTTP code.",
		}, []string{"verb", "resource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmop_api_request_duration_seconds", Help: "How long requests took to answer (a watch: its whole life), by verb and resource.",
			Buckets: prometheus.DefBuckets,
		}, []string{"verb", "resource"}),
	}
	m.registry.MustRegister(m.requests, m.latency,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vmop_api_watches_open", Help: "Watches open now."},
			func() float64 { return float64(watches.total()) }),
		readModelLag{js: js, rm: rm},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// measure counts each request and its duration, by Kubernetes verb and resource.
func (s *server) measure(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		verb, resource := requestVerb(c)
		s.metrics.requests.WithLabelValues(verb, resource, strconv.Itoa(c.Response().Status)).Inc()
		s.metrics.latency.WithLabelValues(verb, resource).Observe(time.Since(start).Seconds())
		return err
	}
}

// requestVerb is the request's verb as kube-apiserver's metrics name it (GET of a
// collection is LIST, with watch=true WATCH) and its resource (plural/subresource), or
// for other paths the route that served it, so labels stay few.
func requestVerb(c echo.Context) (verb, resource string) {
	r := c.Request()
	t, ok := parseTarget(r.URL.Path)
	if !ok {
		return r.Method, c.Path()
	}
	verb, resource = r.Method, t.Kind.Plural
	if t.Subresource != "" {
		resource += "/" + t.Subresource
	}
	if r.Method == http.MethodGet {
		if w, _ := strconv.ParseBool(r.URL.Query().Get("watch")); w {
			verb = "WATCH"
		} else if t.Name == "" {
			verb = "LIST"
		}
	}
	return verb, resource
}

// serveMetrics answers privileged users only: the metrics tell what the cluster holds.
func (s *server) serveMetrics(c echo.Context) error {
	if !s.auth.Privileged(userOf(c)) {
		return apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("User %q cannot get path \"/metrics\": only privileged users may", userOf(c).Name))
	}
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}

// readModelLag is, per stream, how many messages the read model has yet to fold: the
// stream's last sequence minus the last one applied, read when scraped.
type readModelLag struct {
	js jetstream.JetStream
	rm *readmodel.Store
}

var readModelLagDesc = prometheus.NewDesc("vmop_api_readmodel_lag",
	"Messages of the stream the read model has not folded yet (last sequence minus applied).", []string{"stream"}, nil)

func (l readModelLag) Describe(ch chan<- *prometheus.Desc) { ch <- readModelLagDesc }

func (l readModelLag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	spec, status := l.rm.Applied()
	for stream, applied := range map[string]uint64{events.StreamSpecs: spec, events.StreamStatus: status} {
		st, err := l.js.Stream(ctx, stream)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(readModelLagDesc, err)
			continue
		}
		last := st.CachedInfo().State.LastSeq // just read by Stream
		lag := float64(0)
		if last > applied {
			lag = float64(last - applied)
		}
		ch <- prometheus.MustNewConstMetric(readModelLagDesc, prometheus.GaugeValue, lag, stream)
	}
}
