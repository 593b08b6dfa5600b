package origin_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/sse"
	"github.com/agentready/agentready/origin"
)

const testPayee = "PayeeWa11et1111111111111111111111111111111"

func gatewayOrigin(t *testing.T, payee string) (*testOrigin, *facilitator.Server) {
	return gatewayOriginConfig(t, origin.Config{Payment: x402.Config{PayTo: payee}})
}

// gatewayOriginConfig runs an origin with cfg, paid through a facilitator
// of its own.
func gatewayOriginConfig(t *testing.T, cfg origin.Config) (*testOrigin, *facilitator.Server) {
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	cfg.FacilitatorURL = fac.URL
	return startOrigin(t, cfg, nil), fac
}

func decodeB64JSON(t testing.TB, h string, into any) {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil || json.Unmarshal(b, into) != nil {
		t.Fatalf("not base64 JSON: %q", h)
	}
}

// payV2 is a v2 PaymentPayload for the requirement the gateway issued.
func payV2(t testing.TB, req x402.PaymentRequired, tx string) string {
	b, _ := json.Marshal(map[string]any{"x402Version": 2, "resource": req.Resource, "accepted": req.Accepts[0],
		"payload": map[string]string{"transaction": tx}})
	return base64.StdEncoding.EncodeToString(b)
}

func gatewayPost(t *testing.T, o *testOrigin, target string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return post(t, nil, o.URL+x402.GatewayPath, "application/json", `{"url":"`+target+`"}`, hdr...)
}

type deepReport struct {
	URL  string `json:"url"`
	Deep *struct {
		Deadline string `json:"deadline"`
		Requests int    `json:"requests"`
		Probes   []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"probes"`
	} `json:"deep"`
	Checks []json.RawMessage `json:"checks"`
}

// The whole purchase on one origin: requirements, payment through the
// facilitator, the deep report with its settlement, the same payment again
// (same report, no second settlement), and every way a payment is refused.
func TestGatewayPurchase(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s := site(t, "full")

	resp, b := gatewayPost(t, o, s.URL)
	if resp.StatusCode != 402 {
		t.Fatalf("unpaid: %d %s", resp.StatusCode, b)
	}
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)
	a := req.Accepts[0]
	if req.X402Version != 2 || a.Amount != "100000" || a.PayTo != testPayee || a.Asset != x402.USDCMint || a.Network != x402.SolanaMainnet ||
		a.Extra["feePayer"] != facilitator.FeePayer || req.Resource.URL != o.URL+x402.GatewayPath {
		t.Errorf("requirements: %+v", req)
	}
	var v1 x402.V1Body
	if json.Unmarshal(b, &v1) != nil || v1.X402Version != 1 || len(v1.Accepts) != 1 || v1.Accepts[0].MaxAmountRequired != "100000" || v1.Accepts[0].Network != "solana" {
		t.Errorf("v1 body: %s", b)
	}
	if envelope(t, b).Code != "payment_required" {
		t.Errorf("402 code: %s", b)
	}

	pay := payV2(t, req, facilitator.Token("Payer1", "100000", testPayee, "n1"))
	resp, b = gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", pay)
	if resp.StatusCode != 200 {
		t.Fatalf("paid: %d %s", resp.StatusCode, b)
	}
	var rep deepReport
	if json.Unmarshal(b, &rep) != nil || rep.Deep == nil || rep.Deep.Deadline != "1m0s" || len(rep.Checks) != 48 || rep.Deep.Requests == 0 {
		t.Errorf("deep report: %.300s", b)
	}
	var settled x402.Settlement
	decodeB64JSON(t, resp.Header.Get("PAYMENT-RESPONSE"), &settled)
	if !settled.Success || settled.Transaction == "" || settled.Network != x402.SolanaMainnet {
		t.Errorf("settlement: %+v", settled)
	}
	if n := len(fac.Calls("/settle")); n != 1 {
		t.Errorf("%d settlements for one payment", n)
	}

	// A lost response: the buyer sends the same payment again with its
	// receipt and gets the same report; the facilitator is not asked again.
	receipt := resp.Header.Get("Payment-Receipt")
	if !strings.HasPrefix(receipt, "rcpt_") || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Payment-Receipt") {
		t.Errorf("the receipt: %q, exposed %q", receipt, resp.Header.Get("Access-Control-Expose-Headers"))
	}
	resp2, b2 := gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", pay, "Payment-Receipt", receipt)
	if resp2.StatusCode != 200 || string(b2) != string(b) || resp2.Header.Get("PAYMENT-RESPONSE") != resp.Header.Get("PAYMENT-RESPONSE") || resp2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d (same body %v)", resp2.StatusCode, string(b2) == string(b))
	}
	if n := len(fac.Calls("/settle")); n != 1 || len(fac.Calls("/verify")) != 1 {
		t.Errorf("the replay reached the facilitator: %d verify, %d settle", len(fac.Calls("/verify")), n)
	}
	// Without the receipt the same payment is someone else's: the settled
	// transaction is public on chain.
	if resp3, b3 := gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", pay); resp3.StatusCode != 402 || !strings.Contains(string(b3), `"reason":"payment_already_used"`) {
		t.Errorf("the payment without its receipt: %d %.200s", resp3.StatusCode, b3)
	}

	other := site(t, "empty")
	for _, c := range []struct {
		name, target, header, value, reason string
	}{
		{"the same payment for another site", other.URL, "PAYMENT-SIGNATURE", pay, "payment_already_used"},
		{"forged", s.URL, "PAYMENT-SIGNATURE", payV2(t, req, base64.StdEncoding.EncodeToString([]byte("forged:x"))), "invalid_exact_svm_payload_transaction_signature"},
		{"expired", s.URL, "PAYMENT-SIGNATURE", payV2(t, req, base64.StdEncoding.EncodeToString([]byte("expired:x"))), "invalid_transaction_state"},
		{"pays someone else", s.URL, "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("Payer1", "100000", "Mallory", "n2")), "invalid_exact_svm_payload_transaction_recipient_mismatch"},
		{"not base64", s.URL, "PAYMENT-SIGNATURE", "%%%", "invalid_payload"},
	} {
		resp, b := gatewayPost(t, o, c.target, c.header, c.value)
		var body struct {
			Reason string `json:"reason"`
			Code   string `json:"code"`
		}
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != 402 || body.Reason != c.reason || body.Code != "payment_invalid" || resp.Header.Get("PAYMENT-REQUIRED") == "" {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
	// A payment for less than the price is refused before the facilitator sees it.
	cheap := req
	cheap.Accepts = []x402.Requirement{a}
	cheap.Accepts[0].Amount = "1"
	before := len(fac.Calls("/verify"))
	resp, b = gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", payV2(t, cheap, facilitator.Token("Payer1", "1", testPayee, "n3")))
	if resp.StatusCode != 402 || !strings.Contains(string(b), `"reason":"invalid_payment_requirements"`) || len(fac.Calls("/verify")) != before {
		t.Errorf("underpaid: %d %s", resp.StatusCode, b)
	}
	if n := len(fac.Calls("/settle")); n != 1 {
		t.Errorf("refused payments were settled: %d settlements", n)
	}

	// v1: X-PAYMENT in, X-PAYMENT-RESPONSE out.
	v1pay, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana",
		"payload": map[string]string{"transaction": facilitator.Token("Payer2", "100000", testPayee, "v1")}})
	resp, b = gatewayPost(t, o, s.URL, "X-PAYMENT", base64.StdEncoding.EncodeToString(v1pay))
	if resp.StatusCode != 200 || resp.Header.Get("X-PAYMENT-RESPONSE") == "" || resp.Header.Get("PAYMENT-RESPONSE") != "" || json.Unmarshal(b, &rep) != nil || rep.Deep == nil {
		t.Errorf("v1 payment: %d %v %.200s", resp.StatusCode, resp.Header, b)
	} else {
		decodeB64JSON(t, resp.Header.Get("X-PAYMENT-RESPONSE"), &settled)
		if !settled.Success || settled.Network != "solana" {
			t.Errorf("v1 settlement: %+v", settled)
		}
	}
}

// A scan that cannot produce a report is not paid for; a facilitator that
// does not answer charges nothing; without a payee nothing is sold.
func TestGatewayRefusals(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	resp, _ := gatewayPost(t, o, "http://127.0.0.1:1/")
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)
	resp, b := gatewayPost(t, o, "http://127.0.0.1:1/", "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("P", "100000", testPayee, "u1")))
	if resp.StatusCode != 422 || envelope(t, b).Code != "site_unreachable" || !strings.Contains(string(b), "not settled") || len(fac.Calls("/settle")) != 0 {
		t.Errorf("unreachable site: %d %s (settlements %d)", resp.StatusCode, b, len(fac.Calls("/settle")))
	}
	// Not charged, so the same payment buys a scan of a site that answers.
	up := site(t, "empty")
	if resp, b = gatewayPost(t, o, up.URL, "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("P", "100000", testPayee, "u1"))); resp.StatusCode != 200 {
		t.Errorf("the payment refused for an unreachable site, for another: %d %s", resp.StatusCode, b)
	}
	s := site(t, "empty")
	fac.Fail = 503
	resp, b = gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("P", "100000", testPayee, "u2")))
	if resp.StatusCode != 503 || envelope(t, b).Code != "facilitator_unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("facilitator down: %d %s", resp.StatusCode, b)
	}
	fac.Fail = 0
	// Not charged, so the same payment works once the facilitator is back.
	if resp, b = gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("P", "100000", testPayee, "u2"))); resp.StatusCode != 200 {
		t.Errorf("the same payment after the outage: %d %s", resp.StatusCode, b)
	}

	free, _ := gatewayOrigin(t, "")
	resp, b = gatewayPost(t, free, s.URL)
	if resp.StatusCode != 503 || envelope(t, b).Code != "payments_disabled" || resp.Header.Get("PAYMENT-REQUIRED") != "" {
		t.Errorf("no payee: %d %s", resp.StatusCode, b)
	}
}

// A caller that accepts text/event-stream watches a settled purchase run:
// payment.settled (the settlement and the receipt), scan.started, every
// check, signal and deep probe, and scan.completed with the report. A
// refusal, the settlement's included, is an ordinary JSON answer.
func TestGatewayStream(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s := site(t, "full")
	resp, _ := gatewayPost(t, o, s.URL)
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)

	resp, b := gatewayPost(t, o, s.URL, "Accept", "text/event-stream", "PAYMENT-SIGNATURE", payV2(t, req, base64.StdEncoding.EncodeToString([]byte("forged:x"))))
	if resp.StatusCode != 402 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("a refused payment on a stream request: %d %s", resp.StatusCode, b)
	}

	hreq, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+s.URL+`"}`))
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("Streamer", "100000", testPayee, "s1")))
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != 200 || !strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", hresp.StatusCode, hresp.Header.Get("Content-Type"))
	}
	count := map[string]int{}
	var order []string
	var completed, settledEv string
	r := sse.NewReader(hresp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		count[e.Name]++
		if len(order) == 0 || order[len(order)-1] != e.Name {
			order = append(order, e.Name)
		}
		switch e.Name {
		case "scan.completed":
			completed = e.Data
		case "payment.settled":
			settledEv = e.Data
		}
	}
	if count["scan.started"] != 1 || count["check"] != 48 || count["signal"] != 5 || count["read_check"] != len(checks.Read()) || count["probe"] == 0 || count["payment.settled"] != 1 || count["scan.completed"] != 1 {
		t.Errorf("events: %v", count)
	}
	if got := strings.Join(order, " "); got != "payment.settled scan.started check read_check signal probe scan.completed" {
		t.Errorf("order: %s", got)
	}
	var rep deepReport
	if json.Unmarshal([]byte(completed), &rep) != nil || rep.Deep == nil || len(rep.Deep.Probes) != count["probe"] {
		t.Errorf("completed: %.200s", completed)
	}
	var hs struct{ Header, Value, Receipt string }
	var settled x402.Settlement
	if json.Unmarshal([]byte(settledEv), &hs) != nil || hs.Header != "PAYMENT-RESPONSE" || hs.Receipt == "" || hs.Receipt != hresp.Header.Get("Payment-Receipt") {
		t.Fatalf("payment.settled: %s (receipt header %q)", settledEv, hresp.Header.Get("Payment-Receipt"))
	}
	decodeB64JSON(t, hs.Value, &settled)
	if !settled.Success || len(fac.Calls("/settle")) != 1 {
		t.Errorf("settlement %+v after %d settle calls", settled, len(fac.Calls("/settle")))
	}
}
