package origin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/sse"
	"github.com/agentready/agentready/origin"
)

// sendPayment posts a purchase without failing the test (for goroutines);
// hdr are more header names and values.
func sendPayment(o *testOrigin, target string, sp facilitator.Spelling, hdr ...string) (int, http.Header, []byte, error) {
	req, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+target+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sp.Header, sp.Value)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// sendUntilServed sends the payment again while it is in flight (409),
// until the deadline: the answer of a payment nobody is serving any more.
func sendUntilServed(t *testing.T, o *testOrigin, target string, sp facilitator.Spelling, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, h, b, err := sendPayment(o, target, sp, hdr...)
		if err != nil {
			t.Fatalf("%s: %v", sp.Name, err)
		}
		if status != http.StatusConflict || time.Now().After(deadline) {
			return status, h, b
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func requirements(t *testing.T, o *testOrigin, target string) x402.PaymentRequired {
	t.Helper()
	resp, _ := gatewayPost(t, o, target)
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)
	return req
}

// v2 is the canonical spelling of a payment of tx.
func v2(t *testing.T, req x402.PaymentRequired, tx string) facilitator.Spelling {
	return facilitator.Spelling{Name: "v2", Header: x402.HeaderSignature, Value: payV2(t, req, tx), Same: true}
}

func reasonOf(b []byte) (code, reason string) {
	var e struct{ Code, Reason string }
	_ = json.Unmarshal(b, &e)
	return e.Code, e.Reason
}

// A spent payment re-spelled does not buy another scan: every spelling the
// gateway takes for the same payment replays the report to its buyer only
// (with the receipt) and is payment_already_used for anyone else and for
// another site; every other spelling is refused as malformed. None reaches
// the facilitator or either site.
func TestGatewayRespelledPaymentBuysNothing(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s, other := site(t, "full"), site(t, "empty")
	req := requirements(t, o, s.URL)
	tx := facilitator.Token("Respeller", req.Accepts[0].Amount, testPayee, "one")
	junk := facilitator.Token("Respeller", req.Accepts[0].Amount, testPayee, "never-paid")
	all := facilitator.Respellings(req, tx, junk)

	status, h, first, err := sendPayment(o, s.URL, all[0])
	receipt := h.Get("Payment-Receipt")
	if err != nil || status != 200 || !strings.HasPrefix(receipt, "rcpt_") {
		t.Fatalf("the purchase: %d %v %s", status, err, first)
	}
	hits := len(s.Hits())
	same, refused := 0, 0
	for _, sp := range all {
		if strings.ContainsAny(sp.Value, "\r\n") {
			continue // HTTP cannot carry it (the unit test reads it)
		}
		for _, c := range []struct {
			target  string
			receipt bool
		}{{s.URL, false}, {s.URL, true}, {other.URL, true}, {other.URL, false}} {
			var hdr []string
			if c.receipt {
				hdr = []string{"Payment-Receipt", receipt}
			}
			status, h, b, err := sendPayment(o, c.target, sp, hdr...)
			if err != nil {
				t.Fatal(err)
			}
			code, reason := reasonOf(b)
			settlement, absent := "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"
			if sp.Header == x402.HeaderPaymentV1 {
				settlement, absent = absent, settlement
			}
			switch {
			case sp.Same && c.target == s.URL && c.receipt:
				if status != 200 || h.Get("Idempotent-Replayed") != "true" || string(b) != string(first) || h.Get(settlement) == "" || h.Get(absent) != "" {
					t.Errorf("%s with its receipt: %d replayed=%q same report %v", sp.Name, status, h.Get("Idempotent-Replayed"), string(b) == string(first))
				}
			case sp.Same:
				if status != 402 || code != "payment_invalid" || reason != "payment_already_used" {
					t.Errorf("%s (receipt %v, same site %v): %d %.200s", sp.Name, c.receipt, c.target == s.URL, status, b)
				}
			default:
				if status != 402 || code != "payment_invalid" || reason != "invalid_payload" {
					t.Errorf("%s: %d %.200s, want invalid_payload", sp.Name, status, b)
				}
			}
		}
		if sp.Same {
			same++
		} else {
			refused++
		}
	}
	if v, st := len(fac.Calls("/verify")), len(fac.Calls("/settle")); v != 1 || st != 1 {
		t.Errorf("%d verifications and %d settlements for one payment sent %d ways", v, st, len(all))
	}
	if len(s.Hits()) != hits || len(other.Hits()) != 0 {
		t.Errorf("re-spellings reached the sites: %d more requests to the site, %d to the other", len(s.Hits())-hits, len(other.Hits()))
	}
	t.Logf("%d spellings of one payment: %d the same payment, %d refused", len(all), same, refused)
}

// The same through the MCP deep_scan tool, whose payment travels as JSON
// in _meta: no re-spelling reaches the facilitator or the site.
func TestMCPRespelledPaymentBuysNothing(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s, other := site(t, "full"), site(t, "empty")
	req := requirements(t, o, s.URL)
	tx := facilitator.Token("McpRespeller", req.Accepts[0].Amount, testPayee, "one")
	all := facilitator.Respellings(req, tx, facilitator.Token("McpRespeller", req.Accepts[0].Amount, testPayee, "never-paid"))
	cs := mcpSession(t, o)
	deepScan := func(target string, pay []byte) *mcp.CallToolResult {
		var v any
		if json.Unmarshal(pay, &v) != nil {
			return nil // not JSON: the MCP transport cannot carry it
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deep_scan", Arguments: map[string]any{"url": target},
			Meta: mcp.Meta{"x402/payment": json.RawMessage(pay)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := deepScan(s.URL, all[0].JSON()); res == nil || res.IsError {
		t.Fatalf("the purchase: %+v", res)
	}
	hits := len(s.Hits())
	for _, sp := range all {
		for _, target := range []string{s.URL, other.URL} {
			res := deepScan(target, sp.JSON())
			if res != nil && !res.IsError {
				t.Errorf("%s for %s: a report without its receipt", sp.Name, target)
			}
		}
	}
	if v, st := len(fac.Calls("/verify")), len(fac.Calls("/settle")); v != 1 || st != 1 {
		t.Errorf("%d verifications and %d settlements for one payment", v, st)
	}
	if len(s.Hits()) != hits || len(other.Hits()) != 0 {
		t.Errorf("re-spellings reached the sites: %d more requests, %d to the other", len(s.Hits())-hits, len(other.Hits()))
	}
}

// mcpSession connects the official MCP client to the origin.
func mcpSession(t *testing.T, o *testOrigin) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentready-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: o.URL + "/api/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Ten copies of one payment sent at once by one client (one
// Idempotency-Key) buy one scan: one verification, one settlement, the
// requests of one scan at the site, and every copy gets that report.
func TestGatewayConcurrentCopies(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	// One scan's worth of requests, measured on a site of its own.
	alone := site(t, "full")
	req := requirements(t, o, alone.URL)
	if status, _, b, _ := sendPayment(o, alone.URL, v2(t, req, facilitator.Token("Once", req.Accepts[0].Amount, testPayee, "alone"))); status != 200 {
		t.Fatalf("one purchase: %d %s", status, b)
	}
	oneScan := len(alone.Hits())

	s := site(t, "full")
	tx := facilitator.Token("Racer", req.Accepts[0].Amount, testPayee, "race")
	var same []facilitator.Spelling
	for _, sp := range facilitator.Respellings(req, tx, tx) {
		if sp.Same {
			same = append(same, sp)
		}
	}
	const key = "9b2f7c1e-3d4a-4b5c-8e9f-0a1b2c3d4e5f"
	type answer struct {
		status   int
		replayed bool
		body     string
	}
	answers := make([]answer, 10)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, h, b := sendUntilServed(t, o, s.URL, same[i%len(same)], "Idempotency-Key", key)
			answers[i] = answer{status, h.Get("Idempotent-Replayed") == "true", string(b)}
		}()
	}
	close(start)
	wg.Wait()
	served := 0
	for i, a := range answers {
		if a.status != 200 {
			t.Errorf("%s: %d %.200s", same[i%len(same)].Name, a.status, a.body)
			continue
		}
		if !a.replayed {
			served++
		}
		if a.body != answers[0].body {
			t.Errorf("%s: another report than the others", same[i%len(same)].Name)
		}
	}
	if served != 1 {
		t.Errorf("%d requests were served a scan of their own, want 1", served)
	}
	if v, st := fac.CallsWith("/verify", tx), fac.CallsWith("/settle", tx); v != 1 || st != 1 {
		t.Errorf("%d verifications and %d settlements for one payment sent ten times", v, st)
	}
	if got := len(s.Hits()); got != oneScan {
		t.Errorf("the site received %d requests, one scan makes %d", got, oneScan)
	}
}

// A stream starts once the payment is settled (payment.settled with the
// receipt comes first), then the scan's events. A client that drops the
// stream after any number of events was charged once and collects the
// report with its receipt; the scan ran to its end without it.
func TestGatewayStreamDisconnects(t *testing.T) {
	o, fac := gatewayOriginConfig(t, origin.Config{Payment: x402.Config{PayTo: testPayee}, Heartbeat: 5 * time.Millisecond})
	s := site(t, "full")
	req := requirements(t, o, s.URL)

	full, _ := streamPurchase(t, o, s.URL, payV2(t, req, facilitator.Token("Stayer", req.Accepts[0].Amount, testPayee, "stay")), -1)
	var names []string
	for _, e := range full {
		names = append(names, e.Name)
	}
	// payment.settled, scan.started, 48 checks, 5 signals, the probes, scan.completed.
	if len(full) < 1+1+48+5+1+1 || full[0].Name != "payment.settled" || full[1].Name != "scan.started" || full[len(full)-1].Name != "scan.completed" {
		t.Fatalf("a whole stream: %v", names)
	}
	for _, k := range []int{0, 1, 2, 30, len(full) - 1} {
		tx := facilitator.Token("Leaver", req.Accepts[0].Amount, testPayee, fmt.Sprintf("leave-%d", k))
		sp := v2(t, req, tx)
		got, receipt := streamPurchase(t, o, s.URL, sp.Value, k)
		if receipt == "" {
			t.Fatalf("left after %d events: no receipt in the stream's headers", k)
		}
		status, h, b := sendUntilServed(t, o, s.URL, sp, "Payment-Receipt", receipt)
		var rep deepReport
		switch {
		case status != 200 || h.Get("Idempotent-Replayed") != "true" || json.Unmarshal(b, &rep) != nil || rep.Deep == nil:
			t.Errorf("left after %d events: the same payment with its receipt: %d %.200s", k, status, b)
		case fac.CallsWith("/settle", tx) != 1:
			t.Errorf("left after %d events: %d settlements", k, fac.CallsWith("/settle", tx))
		case len(got) > 0 && got[len(got)-1].Name == "scan.completed" && got[len(got)-1].Data != string(b):
			t.Errorf("left after %d events: the replay is not the report the stream sent", k)
		}
	}
}

// streamPurchase sends a purchase asking for a stream and reads n events
// (every one when n < 0, heartbeats not counted), then drops the
// connection. It returns the events and the receipt.
func streamPurchase(t *testing.T, o *testOrigin, target, pay string, n int) ([]sse.Event, string) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+target+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("PAYMENT-SIGNATURE", pay)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var got []sse.Event
	r := sse.NewReader(resp.Body)
	for n < 0 || len(got) < n {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Name != "heartbeat" {
			got = append(got, e)
		}
	}
	return got, resp.Header.Get("Payment-Receipt")
}

// auditEntry is one line of the audit log of a paid request.
type auditEntry struct {
	Outcome, Settled, Transaction string
	Delivered                     bool
}

func deepAudit(t *testing.T, buf *syncBuffer) []auditEntry {
	t.Helper()
	var out []auditEntry
	for _, m := range auditLines(t, buf, "scan.deep") {
		e := auditEntry{}
		e.Outcome, _ = m["outcome"].(string)
		e.Settled, _ = m["settled"].(string)
		e.Transaction, _ = m["transaction"].(string)
		e.Delivered, _ = m["delivered"].(bool)
		out = append(out, e)
	}
	return out
}

// A client that hangs up before its payment is settled is not charged,
// whether it leaves while the payment is verified or while its worker is
// awaited; one that hangs up once /settle is under way is charged once
// and collects the report with the Idempotency-Key it sent. The audit
// log says which, settlement for settlement with the facilitator's log.
func TestGatewayCallerLeaves(t *testing.T) {
	var audit syncBuffer
	o, fac := gatewayOriginConfig(t, origin.Config{Payment: x402.Config{PayTo: testPayee}, Audit: slog.New(slog.NewJSONHandler(&audit, nil))})
	s := site(t, "full")
	req := requirements(t, o, s.URL)

	// leave sends a purchase and hangs up once the facilitator has received
	// n calls to path.
	leave := func(tx, path string, n int, hdr ...string) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for deadline := time.Now().Add(10 * time.Second); len(fac.Calls(path)) < n && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		hreq, _ := http.NewRequestWithContext(ctx, "POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+s.URL+`"}`))
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("PAYMENT-SIGNATURE", payV2(t, req, tx))
		for i := 0; i+1 < len(hdr); i += 2 {
			hreq.Header.Set(hdr[i], hdr[i+1])
		}
		if resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(hreq); err == nil {
			resp.Body.Close()
			t.Fatalf("the request was answered (%d) before the client left", resp.StatusCode)
		}
	}

	// During /verify: nothing is settled, nothing reaches the site, and the
	// payment still buys a scan afterwards.
	fac.SetStall(500 * time.Millisecond)
	early := facilitator.Token("Early", req.Accepts[0].Amount, testPayee, "left-at-verify")
	leave(early, "/verify", len(fac.Calls("/verify"))+1)
	fac.SetStall(0)
	if n := fac.CallsWith("/settle", early); n != 0 || len(s.Hits()) != 0 {
		t.Errorf("left during /verify: %d settlements, %d requests to the site", n, len(s.Hits()))
	}
	if status, _, b := sendUntilServed(t, o, s.URL, v2(t, req, early)); status != 200 {
		t.Errorf("the same payment afterwards: %d %.200s", status, b)
	}

	// During /settle: charged, the scan runs to its end, and the key
	// collects it.
	fac.SetStall(300 * time.Millisecond)
	late := facilitator.Token("Late", req.Accepts[0].Amount, testPayee, "left-at-settle")
	const key = "5c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5"
	leave(late, "/settle", len(fac.Calls("/settle"))+1, "Idempotency-Key", key)
	fac.SetStall(0)
	status, h, b := sendUntilServed(t, o, s.URL, v2(t, req, late), "Idempotency-Key", key)
	var rep deepReport
	if status != 200 || h.Get("Idempotent-Replayed") != "true" || json.Unmarshal(b, &rep) != nil || rep.Deep == nil {
		t.Errorf("left during /settle, then the same payment and key: %d %.200s", status, b)
	}
	if n := fac.CallsWith("/settle", late); n != 1 {
		t.Errorf("left during /settle: %d settlements", n)
	}

	// An unsettleable payment: refused, nothing scanned.
	hits := len(s.Hits())
	if status, _, b := sendUntilServed(t, o, s.URL, v2(t, req, facilitator.Token("Broke", req.Accepts[0].Amount, testPayee, facilitator.Unsettleable+"-1"))); status != 402 {
		t.Errorf("an unsettleable payment: %d %s", status, b)
	}
	if len(s.Hits()) != hits {
		t.Errorf("an unsettleable payment reached the site: %d requests", len(s.Hits())-hits)
	}

	// The audit log and the facilitator agree, call for call.
	settledTx := map[string]int{}
	for _, c := range fac.Calls("/settle") {
		var call struct {
			PaymentPayload struct {
				Payload struct{ Transaction string }
			}
		}
		_ = json.Unmarshal(c.Body, &call)
		if tx := call.PaymentPayload.Payload.Transaction; fac.Settled(tx) {
			settledTx["sig"+tx[:min(len(tx), 40)]]++
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var entries []auditEntry
	for {
		entries = deepAudit(t, &audit)
		n := 0
		for _, e := range entries {
			if e.Settled == "yes" {
				n++
			}
		}
		if n >= len(settledTx) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	logged := map[string]int{}
	for _, e := range entries {
		if e.Settled == "yes" {
			logged[e.Transaction]++
		}
	}
	if fmt.Sprint(logged) != fmt.Sprint(settledTx) {
		t.Errorf("the audit log's settlements %v, the facilitator's %v", logged, settledTx)
	}
	var undelivered int
	for _, e := range entries {
		if !e.Delivered {
			undelivered++
		}
	}
	if undelivered != 2 {
		t.Errorf("%d answers logged as not delivered, want the 2 of the clients that left: %+v", undelivered, entries)
	}
}

// The MCP deep_scan tool: the result is the settled report with its
// receipt; a caller that cancels after the settlement collects the report
// with the idempotency key it sent, charged once.
func TestMCPDeepScanAfterSettlement(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s := site(t, "full")
	cs := mcpSession(t, o)
	var pr x402.PaymentRequired
	structured(t, call(t, cs, "deep_scan", map[string]any{"url": s.URL}), &pr)
	payment := func(nonce string) (map[string]any, string) {
		tx := facilitator.Token("McpPayer", pr.Accepts[0].Amount, pr.Accepts[0].PayTo, nonce)
		return map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0], "payload": map[string]string{"transaction": tx}}, tx
	}
	deepScan := func(ctx context.Context, pay map[string]any, meta ...string) (*mcp.CallToolResult, error) {
		m := mcp.Meta{"x402/payment": pay}
		for i := 0; i+1 < len(meta); i += 2 {
			m[meta[i]] = meta[i+1]
		}
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "deep_scan", Arguments: map[string]any{"url": s.URL}, Meta: m})
	}

	pay, _ := payment("mcp-paid")
	res, err := deepScan(context.Background(), pay)
	if err != nil || res.IsError {
		t.Fatalf("paid deep_scan: %v %+v", err, res)
	}
	receipt, _ := res.Meta["agentready/payment-receipt"].(string)
	if _, ok := res.Meta["x402/payment-response"]; !ok || !strings.HasPrefix(receipt, "rcpt_") {
		t.Fatalf("the result's _meta: %v", res.Meta)
	}
	if again, _ := deepScan(context.Background(), pay); again == nil || !again.IsError {
		t.Error("the same payment without its receipt bought the report again")
	}
	if again, err := deepScan(context.Background(), pay, "agentready/payment-receipt", receipt); err != nil || again.IsError {
		t.Errorf("the same payment with its receipt: %v %s", err, errText(again))
	}

	// Cancel the call once the scan has reached the site.
	pay, tx := payment("mcp-cancel")
	const key = "mcp-7e8f9a0b-1c2d-3e4f-5a6b-7c8d9e0f1a2b"
	ctx, cancel := context.WithCancel(context.Background())
	hits := len(s.Hits())
	go func() {
		for deadline := time.Now().Add(10 * time.Second); len(s.Hits()) == hits && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if res, err := deepScan(ctx, pay, "agentready/idempotency-key", key); err == nil && !res.IsError {
		t.Logf("the call finished before it was canceled")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err = deepScan(context.Background(), pay, "agentready/idempotency-key", key)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(errText(res), "being served right now") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res.IsError {
		t.Errorf("the same payment and key after a canceled call: %s", errText(res))
	}
	if n := fac.CallsWith("/settle", tx); n != 1 {
		t.Errorf("%d settlements of the payment of a canceled call and its retry, want 1", n)
	}
}
