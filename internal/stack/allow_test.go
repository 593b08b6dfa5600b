package stack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

// The service started with an allow-list (serve --allow) and without
// --allow-private reaches exactly what the list names: the fixture site is
// scanned and the listed receiver gets its deliveries, while the same
// loopback address on another port is refused as a target and as a
// callback. Through the real edge, the monitors of every token one address
// mints are held to the per-address ceiling.
func TestAllowListAndMinterCeilingThroughTheStack(t *testing.T) {
	site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", "full"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	var delivered atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { delivered.Add(1) }))
	t.Cleanup(recv.Close)
	unlisted := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the unlisted server was reached") }))
	t.Cleanup(unlisted.Close)

	allow, err := fetch.ParseAllowList(strings.TrimPrefix(site.URL, "http://") + "," + strings.TrimPrefix(recv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := edgetest.Env()
	env["AGENTREADY_MONITORS_TOKEN"], env["AGENTREADY_MONITORS_PER_MINTER"], env["AGENTREADY_TOKEN_MINTS_HOURLY"] = "2", "3", "10"
	svc, err := stack.Start(stack.Options{Addr: "127.0.0.1:0", Allow: allow, Store: st, Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})

	do := func(method, path, body string, hdr ...string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, svc.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code := func(b []byte) string {
		var e struct{ Code string }
		json.Unmarshal(b, &e)
		return e.Code
	}

	if status, b := do("GET", "/api/scan?format=json&url="+url.QueryEscape(site.URL), ""); status != 200 {
		t.Fatalf("the listed site: %d %s", status, b)
	}
	if status, b := do("GET", "/api/scan?format=json&url="+url.QueryEscape(unlisted.URL), ""); status != 400 || code(b) != "invalid_url" {
		t.Errorf("the same address on another port: %d %s", status, b)
	}
	if status, b := do("POST", "/api/monitors", `{"url":"`+site.URL+`","callback_url":"`+unlisted.URL+`/hook"}`); status != 400 || code(b) != "invalid_callback_url" {
		t.Errorf("an unlisted callback: %d %s", status, b)
	}

	// Tokens minted from this address hold 3 monitors together, 2 each.
	created := 0
	for range 3 {
		status, b := do("POST", "/api/agent/token", `{"grant_type":"client_credentials"}`)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if status != 200 || json.Unmarshal(b, &tok) != nil {
			t.Fatalf("token: %d %s", status, b)
		}
		for range 2 {
			status, b := do("POST", "/api/monitors", `{"url":"`+site.URL+`","callback_url":"`+recv.URL+`/hook","cadence":"daily"}`, "Authorization", "Bearer "+tok.AccessToken)
			switch {
			case status == 201:
				created++
			case status != 400 || code(b) != "too_many_monitors" || !strings.Contains(string(b), "minted from this address"):
				t.Fatalf("monitor: %d %s", status, b)
			}
		}
	}
	if created != 3 {
		t.Errorf("the tokens of one address hold %d monitors, want 3", created)
	}
	for deadline := time.Now().Add(20 * time.Second); delivered.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the listed receiver got %d deliveries, want one per monitor (3)", delivered.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
