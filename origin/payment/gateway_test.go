package payment

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/facilitator"
	"github.com/agentready/agentready/origin/store"
)

const (
	payee = "PayeeWa11et1111111111111111111111111111111"
	base  = "https://scanner.example"
	site  = "https://site.example/"
)

// testGateway sells scans done by scan, paid through a local facilitator,
// with its records in an embedded store.
func testGateway(t *testing.T, scan func(ctx context.Context, url string, progress func(engine.Event)) ([]byte, error)) (*Gateway, *facilitator.Server) {
	t.Helper()
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &Gateway{Pay: x402.Config{PayTo: payee}, Facilitator: NewFacilitator(fac.URL, fetch.AddressPolicy{AllowPrivate: true}, 0), Records: st.Idempotency(),
		Lease: time.Minute, Scan: scan}, fac
}

// pay is the v2 payment header the official client builds from the 402
// for a test transaction.
func pay(nonce string) string {
	req := x402.Config{PayTo: payee, FeePayer: facilitator.FeePayer}.Required(base, "")
	b, _ := json.Marshal(x402.Payload{X402Version: 2, Resource: &req.Resource, Accepted: &req.Accepts[0],
		Payload: json.RawMessage(`{"transaction":"` + facilitator.Token("Payer", req.Accepts[0].Amount, payee, nonce) + `"}`)})
	return base64.StdEncoding.EncodeToString(b)
}

// A scan that reports its progress as the engine does: started, the checks,
// the signals, gathered, then the deep probes.
func scripted(ctx context.Context, url string, progress func(engine.Event)) ([]byte, error) {
	progress(engine.Event{Kind: engine.EventStarted, URL: url})
	progress(engine.Event{Kind: engine.EventGathered, URL: url, Requests: 31})
	progress(engine.Event{Kind: engine.EventCheckFinished, Check: report.Check{ID: "1.1"}})
	progress(engine.Event{Kind: engine.EventSignalFinished, Signal: report.Signal{ID: "identity.oauth"}})
	progress(engine.Event{Kind: engine.EventProbeFinished, Probe: report.DeepProbe{ID: "mcp.live"}})
	progress(engine.Event{Kind: engine.EventProbeFinished, Probe: report.DeepProbe{ID: "oauth.flow"}})
	return []byte(`{"url":"` + url + `","deep":{"probes":[{"id":"mcp.live"},{"id":"oauth.flow"}]}}`), nil
}

// While the scan runs, the caller sees its free progress only; the paid
// part (the probes, and what it does not know to be free) comes back with
// the settled answer.
func TestFinishHoldsPaidProgressUntilSettled(t *testing.T) {
	g, fac := testGateway(t, scripted)
	p, a := g.Begin(context.Background(), Request{URL: site, Base: base, V2: pay("held")})
	if a != nil {
		t.Fatalf("begin: %d %s", a.Status, a.Body)
	}
	var live []engine.EventKind
	ans := p.Finish(context.Background(), func(e engine.Event) {
		if n := len(fac.Calls("/settle")); n != 0 {
			t.Errorf("%s reached the caller after %d settlements: progress is only before", e.Kind, n)
		}
		live = append(live, e.Kind)
	})
	if ans.Status != 200 || len(fac.Calls("/settle")) != 1 {
		t.Fatalf("answer %d %s after %d settlements", ans.Status, ans.Body, len(fac.Calls("/settle")))
	}
	want := []engine.EventKind{engine.EventStarted, engine.EventCheckFinished, engine.EventSignalFinished}
	if !equalKinds(live, want) {
		t.Errorf("live progress %v, want %v", live, want)
	}
	var paid []string
	for _, e := range ans.Paid {
		if e.Kind == engine.EventProbeFinished {
			paid = append(paid, e.Probe.ID)
		}
	}
	if len(paid) != 2 || paid[0] != "mcp.live" || paid[1] != "oauth.flow" {
		t.Errorf("held probes %v, want mcp.live then oauth.flow", paid)
	}
	// A replay carries the report, never held progress (it has none to hold).
	_, replay := g.Begin(context.Background(), Request{URL: site, Base: base, V2: pay("held")})
	if replay == nil || replay.Status != 200 || replay.Header["Idempotent-Replayed"] != "true" || replay.Paid != nil {
		t.Errorf("replay: %+v", replay)
	}
}

func equalKinds(a, b []engine.EventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A caller that leaves before the scan finished settles nothing and keeps
// its payment; one that leaves after finds the settled report by sending
// the same payment again.
func TestFinishWhenTheCallerLeaves(t *testing.T) {
	t.Run("during the scan", func(t *testing.T) {
		// The scan notices the cancellation only at its end (a scan past its
		// last fetch): its report must still not be sold.
		g, fac := testGateway(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		g.Scan = func(sctx context.Context, url string, progress func(engine.Event)) ([]byte, error) {
			cancel()
			return scripted(sctx, url, progress)
		}
		p, a := g.Begin(ctx, Request{URL: site, Base: base, V2: pay("left-early")})
		if a != nil {
			t.Fatalf("begin: %d %s", a.Status, a.Body)
		}
		ans := p.Finish(ctx, nil)
		var e struct{ Code string }
		_ = json.Unmarshal(ans.Body, &e)
		if ans.Status != http.StatusServiceUnavailable || e.Code != string(apierr.ScanCanceled) || ans.Paid != nil || len(fac.Calls("/settle")) != 0 {
			t.Fatalf("canceled scan: %d %s, %d settlements", ans.Status, ans.Body, len(fac.Calls("/settle")))
		}
		// Released: the same payment buys the scan.
		g.Scan = scripted
		if got := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("left-early")}); got.Status != 200 || got.Header["Idempotent-Replayed"] != "" {
			t.Errorf("the same payment after a canceled scan: %d %v %s", got.Status, got.Header, got.Body)
		}
	})
	t.Run("during the settlement", func(t *testing.T) {
		g, fac := testGateway(t, scripted)
		fac.Stall = 300 * time.Millisecond // the caller leaves while /settle is being answered
		ctx, cancel := context.WithCancel(context.Background())
		p, a := g.Begin(ctx, Request{URL: site, Base: base, V2: pay("left-late")})
		if a != nil {
			t.Fatalf("begin: %d %s", a.Status, a.Body)
		}
		go func() {
			for deadline := time.Now().Add(10 * time.Second); len(fac.Calls("/settle")) == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		ans := p.Finish(ctx, nil)
		if ans.Status != 200 || len(fac.Calls("/settle")) != 1 || ctx.Err() == nil {
			t.Fatalf("settlement after the caller left: %d %s (%d settlements, canceled %v)", ans.Status, ans.Body, len(fac.Calls("/settle")), ctx.Err() != nil)
		}
		fac.Stall = 0
		replay := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("left-late")})
		if replay.Status != 200 || replay.Header["Idempotent-Replayed"] != "true" || string(replay.Body) != string(ans.Body) || len(fac.Calls("/settle")) != 1 {
			t.Errorf("the same payment again: %d %v, %d settlements", replay.Status, replay.Header, len(fac.Calls("/settle")))
		}
	})
}

// One payment sent as v2 then as v1 is one purchase; the replay's
// settlement header is the one the v1 client reads, with the v1 network.
func TestReplayAcrossVersions(t *testing.T) {
	g, fac := testGateway(t, scripted)
	tx := facilitator.Token("Payer", x402.Amount, payee, "both")
	first := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("both")})
	if first.Status != 200 || first.Header[x402.HeaderResponse] == "" {
		t.Fatalf("v2: %d %s", first.Status, first.Body)
	}
	v1, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": map[string]string{"transaction": tx}})
	again := g.Serve(context.Background(), Request{URL: site, Base: base, V1: base64.StdEncoding.EncodeToString(v1)})
	var s x402.Settlement
	b, _ := base64.StdEncoding.DecodeString(again.Header[x402.HeaderResponseV1])
	_ = json.Unmarshal(b, &s)
	if again.Status != 200 || again.Header["Idempotent-Replayed"] != "true" || string(again.Body) != string(first.Body) ||
		again.Header[x402.HeaderResponse] != "" || again.Header["Access-Control-Expose-Headers"] != x402.HeaderResponseV1 || !s.Success || s.Network != "solana" {
		t.Errorf("v1 replay of a v2 payment: %d %v", again.Status, again.Header)
	}
	if len(fac.Calls("/verify")) != 1 || len(fac.Calls("/settle")) != 1 {
		t.Errorf("%d verifications, %d settlements for one payment", len(fac.Calls("/verify")), len(fac.Calls("/settle")))
	}
	other := g.Serve(context.Background(), Request{URL: "https://other.example/", Base: base, V1: base64.StdEncoding.EncodeToString(v1)})
	if other.Status != 402 || !json.Valid(other.Body) {
		t.Errorf("the v1 spelling for another site: %d %s", other.Status, other.Body)
	}
	var body struct{ Reason string }
	_ = json.Unmarshal(other.Body, &body)
	if body.Reason != "payment_already_used" {
		t.Errorf("the v1 spelling for another site: reason %q", body.Reason)
	}
}
