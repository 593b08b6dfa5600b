package payment

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/origin/store"
)

const (
	payee = "PayeeWa11et1111111111111111111111111111111"
	base  = "https://scanner.example"
	site  = "https://site.example/"
)

// scanLog counts what the site and the paid browser would see: the
// reservations made, the scans run (each a request to the site), and when
// each began relative to the settlements.
type scanLog struct {
	mu                 sync.Mutex
	reserved, released int
	scans              []int // the settlements made when each scan began
}

// testGateway sells scans done by scan, paid through a local facilitator,
// with its records in an embedded store; log records every reservation
// and scan.
func testGateway(t *testing.T, scan func(ctx context.Context, url string, progress func(engine.Event)) ([]byte, error)) (*Gateway, *facilitator.Server, *scanLog) {
	t.Helper()
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := &scanLog{}
	g := &Gateway{Pay: x402.Config{PayTo: payee}, Facilitator: NewFacilitator(fac.URL, fetch.AddressPolicy{AllowPrivate: true}, 0), Records: st.Idempotency(),
		Lease: time.Minute}
	g.Reserve = func(ctx context.Context, url string) (Scan, func(), error) {
		log.mu.Lock()
		log.reserved++
		log.mu.Unlock()
		var once sync.Once
		release := func() {
			once.Do(func() { log.mu.Lock(); log.released++; log.mu.Unlock() })
		}
		return func(ctx context.Context, progress func(engine.Event)) ([]byte, error) {
			defer release()
			log.mu.Lock()
			log.scans = append(log.scans, len(fac.Calls("/settle")))
			log.mu.Unlock()
			return scan(ctx, url, progress)
		}, release, nil
	}
	return g, fac, log
}

// pay is the v2 payment header the official client builds from the 402
// for a test transaction.
func pay(nonce string) string {
	req := x402.Config{PayTo: payee, FeePayer: facilitator.FeePayer}.Required(base, "")
	b, _ := json.Marshal(map[string]any{"x402Version": 2, "resource": req.Resource, "accepted": req.Accepts[0],
		"payload": map[string]string{"transaction": facilitator.Token("Payer", req.Accepts[0].Amount, payee, nonce)}})
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

func codeOf(a Answer) (code, reason string) {
	var e struct{ Code, Reason string }
	_ = json.Unmarshal(a.Body, &e)
	return e.Code, e.Reason
}

// The money comes first: every scan begins after its settlement, and a
// payment the facilitator will not settle gets no scan at all (its worker
// is given back), however well it verified.
func TestSettlementBeforeAnyScan(t *testing.T) {
	g, fac, log := testGateway(t, scripted)
	if a := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("paid")}); a.Status != 200 || !a.Settled {
		t.Fatalf("a purchase: %d %s", a.Status, a.Body)
	}
	for i := range 4 {
		a := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay(fmt.Sprintf("%s-%d", facilitator.Unsettleable, i))})
		if _, reason := codeOf(a); a.Status != 402 || reason != "invalid_transaction_state" || a.Settled {
			t.Errorf("an unsettleable payment: %d %s", a.Status, a.Body)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.scans) != 1 || log.scans[0] != 1 {
		t.Errorf("scans began after %v settlements each, want one scan after the one settlement", log.scans)
	}
	if log.reserved != 5 || log.released != 5 {
		t.Errorf("%d reservations, %d given back", log.reserved, log.released)
	}
	if n := len(fac.Calls("/verify")); n != 5 {
		t.Errorf("%d verifications", n)
	}
}

// Once settled, the scan's every event reaches the caller as it happens.
func TestRunShowsEveryEventOnceSettled(t *testing.T) {
	g, fac, _ := testGateway(t, scripted)
	p, a := g.Begin(context.Background(), Request{URL: site, Base: base, V2: pay("live")})
	if a != nil {
		t.Fatalf("begin: %d %s", a.Status, a.Body)
	}
	if a := p.Settle(context.Background()); a != nil {
		t.Fatalf("settle: %d %s", a.Status, a.Body)
	}
	if p.Receipt() == "" || len(fac.Calls("/settle")) != 1 {
		t.Fatalf("settled without a receipt, or %d settlements", len(fac.Calls("/settle")))
	}
	var kinds []engine.EventKind
	ans := p.Run(context.Background(), func(e engine.Event) { kinds = append(kinds, e.Kind) })
	if ans.Status != 200 || ans.Header[HeaderReceipt] != p.Receipt() || len(kinds) != 6 || kinds[5] != engine.EventProbeFinished {
		t.Errorf("run: %d, receipt %q, events %v", ans.Status, ans.Header[HeaderReceipt], kinds)
	}
}

// A caller that leaves before the settlement is not charged and keeps its
// payment; a scan cut short after it (the server stopping) keeps the
// settled payment for its buyer, who runs it later without paying again.
func TestCallerLeavesOrServerStops(t *testing.T) {
	t.Run("before the settlement", func(t *testing.T) {
		g, fac, log := testGateway(t, scripted)
		ctx, cancel := context.WithCancel(context.Background())
		p, a := g.Begin(ctx, Request{URL: site, Base: base, V2: pay("left-early")})
		if a != nil {
			t.Fatalf("begin: %d %s", a.Status, a.Body)
		}
		cancel()
		a = p.Settle(ctx)
		if code, _ := codeOf(*a); a == nil || code != string(apierr.ScanCanceled) || len(fac.Calls("/settle")) != 0 || len(log.scans) != 0 {
			t.Fatalf("left before the settlement: %+v, %d settlements", a, len(fac.Calls("/settle")))
		}
		if got := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("left-early")}); got.Status != 200 || !got.Settled {
			t.Errorf("the same payment afterwards: %d %s", got.Status, got.Body)
		}
	})
	t.Run("during the scan", func(t *testing.T) {
		lifetime, stop := context.WithCancel(context.Background())
		var runs int
		g, fac, _ := testGateway(t, func(ctx context.Context, url string, progress func(engine.Event)) ([]byte, error) {
			runs++
			if runs == 1 {
				stop()
				<-ctx.Done()
				return nil, &apierr.Error{Code: apierr.ScanCanceled, Message: "the scan was canceled"}
			}
			return scripted(ctx, url, progress)
		})
		g.Lifetime = lifetime
		first := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("cut")})
		receipt := first.Header[HeaderReceipt]
		if code, _ := codeOf(first); first.Status != 503 || code != string(apierr.ScanCanceled) || receipt == "" || !first.Settled {
			t.Fatalf("a scan cut short: %d %s %v", first.Status, first.Body, first.Header)
		}
		g.Lifetime = nil
		if a := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("cut")}); a.Status != 402 {
			t.Errorf("without the receipt: %d %s", a.Status, a.Body)
		}
		again := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("cut"), Receipt: receipt})
		if again.Status != 200 || again.Settled || again.Header[x402.HeaderResponse] == "" || len(fac.Calls("/settle")) != 1 || runs != 2 {
			t.Errorf("the buyer again: %d %v, %d settlements, %d runs", again.Status, again.Header, len(fac.Calls("/settle")), runs)
		}
	})
}

// A settled payment's report goes to its buyer only: the transaction is
// public on chain, so sending it again (in either version) needs the
// receipt or the paying request's Idempotency-Key.
func TestReplayIsTheBuyersOnly(t *testing.T) {
	g, fac, log := testGateway(t, scripted)
	tx := facilitator.Token("Payer", x402.Amount, payee, "both")
	const key = "3f0c9d52-7b1e-4c8a-9e6f-2a4b8c1d0e7f"
	first := g.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("both"), IdempotencyKey: key})
	receipt := first.Header[HeaderReceipt]
	if first.Status != 200 || first.Header[x402.HeaderResponse] == "" || !strings.HasPrefix(receipt, "rcpt_") {
		t.Fatalf("v2: %d %s %v", first.Status, first.Body, first.Header)
	}
	v1, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": map[string]string{"transaction": tx}})
	v1h := base64.StdEncoding.EncodeToString(v1)
	for _, c := range []struct {
		name   string
		r      Request
		replay bool
	}{
		{"the transaction alone (v2)", Request{V2: pay("both")}, false},
		{"the transaction alone (v1)", Request{V1: v1h}, false},
		{"a wrong receipt", Request{V2: pay("both"), Receipt: "rcpt_AAAAAAAAAAAAAAAAAAAAAA"}, false},
		{"another key", Request{V2: pay("both"), IdempotencyKey: "00000000-0000-0000-0000-000000000000"}, false},
		{"the receipt (v2)", Request{V2: pay("both"), Receipt: receipt}, true},
		{"the receipt (v1)", Request{V1: v1h, Receipt: receipt}, true},
		{"the paying request's key", Request{V2: pay("both"), IdempotencyKey: key}, true},
	} {
		c.r.URL, c.r.Base = site, base
		a := g.Serve(context.Background(), c.r)
		_, reason := codeOf(a)
		switch {
		case !c.replay && (a.Status != 402 || reason != "payment_already_used" || strings.Contains(string(a.Body), "mcp.live")):
			t.Errorf("%s: %d %s", c.name, a.Status, a.Body)
		case c.replay && (a.Status != 200 || a.Header["Idempotent-Replayed"] != "true" || string(a.Body) != string(first.Body) || a.Settled):
			t.Errorf("%s: %d %v", c.name, a.Status, a.Header)
		case c.replay && c.r.V1 != "":
			var s x402.Settlement
			b, _ := base64.StdEncoding.DecodeString(a.Header[x402.HeaderResponseV1])
			_ = json.Unmarshal(b, &s)
			if a.Header[x402.HeaderResponse] != "" || a.Header["Access-Control-Expose-Headers"] != x402.HeaderResponseV1 || !s.Success || s.Network != "solana" {
				t.Errorf("%s: the v1 settlement header %v", c.name, a.Header)
			}
		}
	}
	if len(fac.Calls("/verify")) != 1 || len(fac.Calls("/settle")) != 1 || len(log.scans) != 1 {
		t.Errorf("%d verifications, %d settlements, %d scans for one payment", len(fac.Calls("/verify")), len(fac.Calls("/settle")), len(log.scans))
	}
	other := g.Serve(context.Background(), Request{URL: "https://other.example/", Base: base, V1: v1h, Receipt: receipt})
	if _, reason := codeOf(other); other.Status != 402 || reason != "payment_already_used" {
		t.Errorf("the payment for another site, receipt and all: %d %s", other.Status, other.Body)
	}
	// A short key is no proof: whoever reads the chain could guess it.
	g2, _, _ := testGateway(t, scripted)
	g2.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("short"), IdempotencyKey: "k1"})
	if a := g2.Serve(context.Background(), Request{URL: site, Base: base, V2: pay("short"), IdempotencyKey: "k1"}); a.Status != 402 {
		t.Errorf("a replay proven by a two-character key: %d", a.Status)
	}
}
