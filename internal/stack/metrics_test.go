package stack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

// The origin's metrics are served on AGENTREADY_METRICS_ADDR, a listener of
// their own, and never on the public address: through the edge /metrics is
// a 404 (role all), an origin alone refuses it like any unsigned request
// (role origin), and without the setting no listener serves them at all.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"AGENTREADY_METRICS_ADDR": "127.0.0.1:0", "AGENTREADY_TOKEN_KEYS": splitEnv["AGENTREADY_TOKEN_KEYS"], "AGENTREADY_EDGE_SECRET": splitEnv["AGENTREADY_EDGE_SECRET"]}[k]
	}
	for _, tc := range []struct {
		role   stack.Role
		public int // what the public address answers for /metrics
	}{{stack.RoleAll, 404}, {stack.RoleOrigin, 401}} {
		svc := start(t, stack.Options{Role: tc.role, Env: env})
		if resp, b := testenv.Get(t, svc.URL+"/healthz"); resp.StatusCode != 200 {
			t.Fatalf("%s: /healthz %d %s", tc.role, resp.StatusCode, b)
		}
		resp, b := testenv.Get(t, svc.URL+"/metrics")
		if resp.StatusCode != tc.public || strings.Contains(string(b), "agentready_http_requests_total") {
			t.Errorf("%s: the public address answers /metrics %d (want %d): %.200s", tc.role, resp.StatusCode, tc.public, b)
		}
		if !strings.HasPrefix(svc.MetricsURL, "http://127.0.0.1:") || !strings.HasSuffix(svc.MetricsURL, "/metrics") {
			t.Fatalf("%s: metrics URL %q", tc.role, svc.MetricsURL)
		}
		resp, b = testenv.Get(t, svc.MetricsURL)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") ||
			!strings.Contains(string(b), `agentready_http_requests_total{route="/healthz",status="200"}`) {
			t.Errorf("%s: the metrics address answers %d %q: %.300s", tc.role, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}

	off := start(t, stack.Options{Env: pageEnv})
	if off.MetricsURL != "" {
		t.Errorf("without AGENTREADY_METRICS_ADDR a metrics listener is at %s", off.MetricsURL)
	}
	if resp, _ := testenv.Get(t, off.URL+"/metrics"); resp.StatusCode != 404 {
		t.Errorf("without AGENTREADY_METRICS_ADDR the public address answers /metrics %d", resp.StatusCode)
	}
}

// A metrics address that cannot be listened on stops the start, naming the
// setting.
func TestMetricsAddressTaken(t *testing.T) {
	busy := start(t, stack.Options{Env: pageEnv})
	taken := strings.TrimPrefix(busy.URL, "http://")
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = stack.Start(stack.Options{Addr: "127.0.0.1:0", Store: st, MetricsAddr: taken, Env: pageEnv, AllowPrivate: true})
	if err == nil || !strings.Contains(err.Error(), "AGENTREADY_METRICS_ADDR") || !strings.Contains(err.Error(), taken) {
		t.Fatalf("start with the metrics on a taken address: %v", err)
	}
	if _, err := http.Get(busy.URL + "/healthz"); err != nil {
		t.Fatalf("the first service stopped answering: %v", err)
	}
}
