package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The container's HEALTHCHECK: 0 on a 200 from /healthz, 1 on anything else
// or no answer, and --wait keeps asking until the service is up.
func TestHealthcheck(t *testing.T) {
	var status atomic.Int64
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	u := srv.URL + "/healthz"

	status.Store(200)
	if code, out, errb := runCLI("healthcheck", "--url", u); code != exitOK || !strings.Contains(out, "healthy") {
		t.Errorf("a 200: exit %d, %q %q", code, out, errb)
	}
	status.Store(503)
	if code, _, errb := runCLI("healthcheck", "--url", u); code != 1 || !strings.Contains(errb, "answered 503") {
		t.Errorf("a 503: exit %d, %q", code, errb)
	}
	// Healthy from the fifth request on: --wait asks until then.
	asked.Store(0)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) < 5 {
			w.WriteHeader(503)
		}
	})
	if code, _, errb := runCLI("healthcheck", "--url", u, "--wait", "10s"); code != exitOK || asked.Load() != 5 {
		t.Errorf("--wait: exit %d after %d requests, %q", code, asked.Load(), errb)
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	if code, _, errb := runCLI("healthcheck", "--url", "http://"+addr+"/healthz", "--timeout", "1s"); code != 1 || !strings.Contains(errb, "did not answer") {
		t.Errorf("nothing listening: exit %d, %q", code, errb)
	}

	t.Setenv("AGENTREADY_ADDR", "nonsense")
	if code, _, errb := runCLI("healthcheck"); code != exitUsage || !strings.Contains(errb, "AGENTREADY_ADDR") {
		t.Errorf("a malformed AGENTREADY_ADDR: exit %d, %q", code, errb)
	}
}

func TestHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/healthz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		":9000":          "http://127.0.0.1:9000/healthz",
		"[::]:8080":      "http://[::1]:8080/healthz",
		"[fd00::1]:8081": "http://[fd00::1]:8081/healthz",
		"origin-a:8081":  "http://origin-a:8081/healthz",
		"10.0.0.7:80":    "http://10.0.0.7:80/healthz",
	} {
		if got, err := healthURL(addr); err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := healthURL("8080"); err == nil {
		t.Error(`healthURL("8080") accepted a port without a colon`)
	}
}

// Every serve setting that is not a secret has an environment form, and the
// split roles refuse to start without what the other half must share.
func TestServeSettingsFromTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"bad drain", map[string]string{"AGENTREADY_DRAIN": "soon"}, nil, exitUsage, "AGENTREADY_DRAIN"},
		{"bad cache ttl", map[string]string{"AGENTREADY_CACHE_TTL": "-1s"}, nil, exitUsage, "AGENTREADY_CACHE_TTL"},
		{"bad role", map[string]string{"AGENTREADY_ROLE": "proxy"}, nil, exitUsage, "want all"},
		{"edge without origins", map[string]string{"AGENTREADY_ROLE": "edge"}, []string{"--edge-wasm", ""}, 1, "AGENTREADY_ORIGINS"},
		{"edge without a shared secret", map[string]string{"AGENTREADY_ROLE": "edge", "AGENTREADY_ORIGINS": "http://origin-a:8081"}, []string{"--edge-wasm", ""}, 1, "AGENTREADY_EDGE_SECRET"},
		{"origin without token keys", map[string]string{"AGENTREADY_ROLE": "origin", "AGENTREADY_EDGE_SECRET": strings.Repeat("s", 32)}, nil, 1, "AGENTREADY_TOKEN_KEYS"},
		{"origins with role all", map[string]string{"AGENTREADY_ORIGINS": "http://origin-a:8081"}, []string{"--edge-wasm", ""}, 1, "AGENTREADY_ROLE=edge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AGENTREADY_ROLE", "AGENTREADY_ORIGINS", "AGENTREADY_EDGE_SECRET", "AGENTREADY_TOKEN_KEYS", "REDIS_URL"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
			code, _, errb := runCLI(args...)
			if code != tc.code || !strings.Contains(errb, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want it to name %q)", code, tc.code, errb, tc.want)
			}
		})
	}
}
