package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/reconcile"
	"github.com/vmop/vmop/pkg/vcenter"
)

// startMetrics serves the services' /metrics (reconciles, queue depth, consumer lag,
// status slices published, vCenter calls and tasks: each labelled by service where it
// can be) and /healthz (every NATS connection of the process is up) on addr, plain HTTP:
// a listener for Prometheus and health checks, apart from the API. No addr: nothing.
func startMetrics(addr string, conns []*nats.Conn) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(reconcile.Collectors()...)
	reg.MustRegister(vcenter.Collectors()...)
	reg.MustRegister(events.Collectors()...)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		for _, nc := range conns {
			if !nc.IsConnected() {
				http.Error(w, "NATS: "+strings.ToLower(nc.Status().String()), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("VMOP_METRICS_ADDR: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics listener", "err", err)
		}
	}()
	slog.Info("metrics", "url", "http://"+clientAddr(ln.Addr().String())+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// healthcheck is `vmop healthcheck URL`: exit 0 when URL answers 200, for container
// health checks in images without curl. An https URL is verified against the stack's own
// CA (caFile, $VMOP_DATA/pki/ca.crt), which signs the API's certificate. A tcp://host:port
// URL only needs a connection accepted (the balancer, which speaks no HTTP itself).
func healthcheck(ctx context.Context, url, caFile string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if addr, ok := strings.CutPrefix(url, "tcp://"); ok {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{}
	if req.URL.Scheme == "https" {
		ca, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("the stack's CA: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}
