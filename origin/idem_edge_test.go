package origin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/origin"
)

// auditLines returns the audit records of one action.
func auditLines(t *testing.T, buf *syncBuffer, action string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if l == "" || json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		if m["action"] == action {
			out = append(out, m)
		}
	}
	return out
}

// Behind the edge every request reaches the origin from
// the edge's address, so an Idempotency-Key is scoped by the caller the edge
// resolved, not by the socket. Two API keys send one key with one body:
// while the first caller's request is still running the second is not told
// 409 (it would be if they shared a scope), each gets its own response
// (audited under its own name, never the other's replay), and each, sending
// the key again, gets its own replay. Anonymous callers are scoped by their
// address, apart from both.
func TestIdempotencyScopedByCallerThroughEdge(t *testing.T) {
	var audit syncBuffer
	secrets := map[string]string{"alice": "alice-" + strings.Repeat("a", 32), "bob": "bob-" + strings.Repeat("b", 32)}
	var entries []string
	for name, secret := range secrets {
		sum := sha256.Sum256([]byte(secret))
		entries = append(entries, name+":"+hex.EncodeToString(sum[:]))
	}
	env := map[string]string{"AGENTREADY_API_KEYS": strings.Join(entries, ",")}
	svc, err := stack.Start(stack.Options{
		Addr: "127.0.0.1:0", AllowPrivate: true, Store: embedded(t), Env: func(k string) string { return env[k] },
		Origin:       origin.Config{Audit: slog.New(slog.NewJSONHandler(&audit, nil))},
		ScanDeadline: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})
	if svc.Wasm {
		t.Fatal("the stack runs the wasm edge; this test means the native one")
	}
	// A site that never links to its own address, so the forwarder is transparent.
	held := holdSite(t, hostOf(site(t, "empty").URL))
	body := `{"url":"` + held.URL + `"}`
	postAs := func(who string) (*http.Response, []byte, error) {
		hdr := []string{"Content-Type", "application/json", "Idempotency-Key", "shared-key-1"}
		if who != "" {
			hdr = append(hdr, "X-API-Key", secrets[who])
		}
		return do(http.DefaultClient, "POST", svc.URL+"/api/scan", body, hdr...)
	}
	type answer struct {
		resp *http.Response
		body []byte
		err  error
	}
	firsts := map[string]chan answer{"alice": make(chan answer, 1), "bob": make(chan answer, 1)}
	for i, who := range []string{"alice", "bob"} {
		go func() {
			r, b, err := postAs(who)
			firsts[who] <- answer{r, b, err}
		}()
		// The second caller sends the key while the first's request holds
		// it. It either joins the scan or (wrongly scoped) is answered at
		// once; the answer is judged below.
		deadline := time.Now().Add(10 * time.Second)
		for svc.Origin.ScanWaiters(held.URL+"/") != i+1 && len(firsts[who]) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s's request neither joined the scan nor was answered within 10s", who)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	held.open()
	first := map[string][]byte{}
	for _, who := range []string{"alice", "bob"} {
		a := <-firsts[who]
		if a.err != nil {
			t.Fatalf("%s: %v", who, a.err)
		}
		if a.resp.StatusCode == 409 {
			t.Fatalf("%s was told 409 idempotency_in_flight: another caller's request held the key in %s's scope", who, who)
		}
		if a.resp.StatusCode != 200 || a.resp.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("%s's first request: %d replayed=%q %.200s", who, a.resp.StatusCode, a.resp.Header.Get("Idempotent-Replayed"), a.body)
		}
		first[who] = a.body
	}
	for _, who := range []string{"alice", "bob"} {
		r, b, err := postAs(who)
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode != 200 || r.Header.Get("Idempotent-Replayed") != "true" || string(b) != string(first[who]) {
			t.Errorf("%s sending the key again: %d replayed=%q same body=%v, want 200, the replay of %s's own response", who, r.StatusCode, r.Header.Get("Idempotent-Replayed"), string(b) == string(first[who]), who)
		}
	}
	// Each API key's request ran under its own name: a caller given the
	// other's stored response would have no audit line of its own.
	byClient := map[string]int{}
	for _, l := range auditLines(t, &audit, "scan.brief") {
		byClient[l["client_id"].(string)]++
	}
	if byClient["key:alice"] != 1 || byClient["key:bob"] != 1 {
		t.Errorf("scan.brief audit lines per caller %v, want one for key:alice and one for key:bob (replays run nothing)", byClient)
	}
	// An anonymous caller is its own scope too: the key is new to it, then replays.
	r, b, err := postAs("")
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("an anonymous caller's first use of the key: %d replayed=%q %.200s, want 200 not replayed", r.StatusCode, r.Header.Get("Idempotent-Replayed"), b)
	}
	r, _, err = postAs("")
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the anonymous caller's second use of the key: %d, not replayed", r.StatusCode)
	}
}
