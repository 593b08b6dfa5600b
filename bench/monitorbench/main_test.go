package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/webhook"
)

// post sends body to the receiver signed with secret, as the origin's sender does.
func post(t *testing.T, r *receiver, secret, id string, body []byte) int {
	t.Helper()
	h, err := webhook.Sign(secret, id, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set(webhook.HeaderEvent, webhook.EventScanCompleted)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The receiver is what the drain is judged by: it must count a monitor once
// however often its event arrives, and refuse what it cannot verify.
func TestReceiverDeduplicatesAndRefusesForgeries(t *testing.T) {
	secret, _ := webhook.NewSecret()
	other, _ := webhook.NewSecret()
	r := newReceiver(secret)
	defer r.srv.Close()
	due := time.Now().Add(-time.Second).UTC().Truncate(time.Millisecond)
	body, _ := json.Marshal(webhook.Event{ID: "evt_a", Type: webhook.EventScanCompleted, CreatedAt: time.Now(), MonitorID: "mon_a",
		Data: webhook.Data{URL: "http://127.0.0.1/", ScheduledFor: due}})

	if c := post(t, r, secret, "evt_a", body); c != http.StatusNoContent {
		t.Fatalf("a signed delivery was answered %d, want 204", c)
	}
	if c := post(t, r, secret, "evt_a", body); c != http.StatusNoContent {
		t.Fatalf("a retried delivery was answered %d, want 204 (receivers acknowledge duplicates)", c)
	}
	if c := post(t, r, other, "evt_a", body); c != http.StatusBadRequest {
		t.Fatalf("a delivery signed with another secret was answered %d, want 400", c)
	}
	evs, monitors := r.snapshot()
	if monitors != 1 || r.monitors() != 1 || len(evs) != 1 {
		t.Fatalf("after one event sent twice: %d monitors (%d counted), %d events; want 1, 1, 1", monitors, r.monitors(), len(evs))
	}
	if r.dups.Load() != 1 || r.bad.Load() != 1 || r.total.Load() != 3 {
		t.Fatalf("dups %d, bad %d, total %d; want 1, 1, 3", r.dups.Load(), r.bad.Load(), r.total.Load())
	}
	if !evs[0].scheduled.Equal(due) || evs[0].at.Before(due) {
		t.Fatalf("recorded scheduled_for %v and receipt %v; want %v and a receipt after it", evs[0].scheduled, evs[0].at, due)
	}
}

// A small burst goes through the whole bench: every monitor runs once and
// its signed scan.completed is received, the store agrees, and the exit
// status is 0; on Redis and on a Redis Cluster too when they are given.
func TestSmallBurstDrains(t *testing.T) {
	t.Chdir(testenv.RepoRoot())
	for _, backend := range []string{"embedded", "redis", "redis-cluster"} {
		t.Run(backend, func(t *testing.T) {
			redis := ""
			switch backend {
			case "redis":
				redis = testenv.RedisURL(t)
			case "redis-cluster":
				redis = testenv.RedisClusterURL(t)
			}
			set := map[string]string{"monitors": "30", "sites": "3", "baseline": "500ms", "lead": "1500ms", "interactive": "10", "timeout": "1m", "redis": redis}
			for k, v := range set {
				if err := flag.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			out = &buf
			t.Cleanup(func() { out = os.Stdout })
			if code := run(); code != 0 {
				t.Fatalf("exit status %d; output:\n%s", code, buf.String())
			}
			for _, want := range []string{
				"30 events for 30 monitors (0 received twice, 0 bad signatures)",
				"store: 30 monitors ran exactly once, 0 otherwise; 30 deliveries recorded delivered; 0 monitors ran twice",
				"| Monitors.CompleteRun | 30 |",
				backend + " state",
			} {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, buf.String())
				}
			}
		})
	}
}
