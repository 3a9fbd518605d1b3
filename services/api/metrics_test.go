package api_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// metricValue is the value of the sample whose line starts with series, or -1.
func metricValue(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// /metrics counts requests by verb, resource and code with their latency, the watches
// open and the read model's lag; only privileged users may read it.
func TestGatewayMetrics(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	if code, _ := g.do("POST", classes, adminToken, seedClass, "Content-Type", "application/yaml"); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	g.do("GET", classes, userToken, nil)
	g.do("GET", classes+"/missing", userToken, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.URL+classes+"?watch=true", nil)
	req.Header.Set("Authorization", "Bearer "+userToken)
	watch, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()

	if code, body := g.do("GET", "/metrics", userToken, nil); code != http.StatusForbidden {
		t.Errorf("an ordinary user reads /metrics: %d %s", code, body)
	}
	if code, _ := g.do("GET", "/metrics", "", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d", code)
	}
	var text string
	g.eventually("the watch counted and the read model caught up", func() bool {
		code, body := g.do("GET", "/metrics", adminToken, nil)
		text = string(body)
		return code == http.StatusOK && metricValue(text, "vmop_api_watches_open") == 1 &&
			metricValue(text, `vmop_api_readmodel_lag{stream="SPECS"}`) == 0
	})
	for series, want := range map[string]float64{
		`vmop_api_requests_total{code="201",resource="virtualmachineclasses",verb="POST"}`:      1,
		`vmop_api_requests_total{code="200",resource="virtualmachineclasses",verb="LIST"}`:      1,
		`vmop_api_requests_total{code="404",resource="virtualmachineclasses",verb="GET"}`:       1,
		`vmop_api_requests_total{code="403",resource="/metrics",verb="GET"}`:                    1,
		`vmop_api_request_duration_seconds_count{resource="virtualmachineclasses",verb="POST"}`: 1,
		`vmop_api_readmodel_lag{stream="STATUS"}`:                                               0,
	} {
		if got := metricValue(text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if !strings.Contains(text, "go_goroutines ") {
		t.Error("no Go runtime metrics")
	}
}
