package stack_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/testenv"
)

const e2ePayee = "AgentreadyE2EPayee1111111111111111111111111"

var payClient = &http.Client{Timeout: 2 * time.Minute} // a deep scan may take its whole 60 s deadline

func payCall(t *testing.T, method, target, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return testenv.Do(t, payClient, testenv.Request(t, method, target, body, hdr...))
}

func buyDeepScan(t *testing.T, svc *stack.Stack, target string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"url": target})
	return payCall(t, "POST", svc.URL+x402.GatewayPath, string(body), append([]string{"Content-Type", "application/json"}, hdr...)...)
}

// runNodeScript runs a script of tests/node with in as its stdin; ok is
// false, with the script's stderr, when it exits non-zero.
func runNodeScript(t *testing.T, node, script string, in any) (out []byte, stderr string, ok bool) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.NodeDir(), script))
	cmd.Stdin = bytes.NewReader(b)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err = cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within 30 s", script)
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: %v", script, err)
		}
		return out, errb.String(), false
	}
	return out, "", true
}

type schemaCheck struct {
	OK            bool            `json:"ok"`
	Error         string          `json:"error"`
	Value         json.RawMessage `json:"value"`
	PaymentStatus string          `json:"paymentStatus"`
}

// officialAccepts402 checks a 402 with @x402/core's schemas (x402check.mjs):
// the v2 PAYMENT-REQUIRED header and the v1 body.
func officialAccepts402(t *testing.T, node, what string, resp *http.Response, body []byte) {
	t.Helper()
	if node == "" {
		return
	}
	out, stderr, ok := runNodeScript(t, node, "x402check.mjs", map[string]any{"header": resp.Header.Get(x402.HeaderRequired), "body": json.RawMessage(body)})
	if !ok {
		t.Fatalf("x402check.mjs on %s: %s", what, stderr)
	}
	var got struct{ V2, V1 *schemaCheck }
	if err := json.Unmarshal(out, &got); err != nil || got.V2 == nil || got.V1 == nil {
		t.Fatalf("x402check.mjs on %s: %v: %s", what, err, out)
	}
	if !got.V2.OK {
		t.Errorf("%s: @x402/core rejects the PAYMENT-REQUIRED header: %s", what, got.V2.Error)
	}
	if !got.V1.OK {
		t.Errorf("%s: @x402/core rejects the v1 body: %s", what, got.V1.Error)
	}
}

// officialSettlement reads the settlement header of a paid answer as
// @x402/core's HTTP client does (decodePaymentResponseHeader, the
// SettleResponse shape, and the client's verdict on the answer).
func officialSettlement(t *testing.T, node, name string, resp *http.Response) {
	t.Helper()
	if node == "" {
		return
	}
	out, stderr, ok := runNodeScript(t, node, "x402check.mjs", map[string]any{"paymentResponse": map[string]any{"name": name, "value": resp.Header.Get(name), "status": resp.StatusCode}})
	if !ok {
		t.Fatalf("x402check.mjs on %s: %s", name, stderr)
	}
	var got struct{ Settle *schemaCheck }
	if err := json.Unmarshal(out, &got); err != nil || got.Settle == nil {
		t.Fatalf("x402check.mjs on %s: %v: %s", name, err, out)
	}
	if !got.Settle.OK || got.Settle.PaymentStatus != "settled" {
		t.Errorf("@x402/core reads %s as %q: %s", name, got.Settle.PaymentStatus, got.Settle.Error)
	}
}

// payment is what a paying agent sends: the header, its value, and the
// requirement it chose.
type payment struct {
	Header      string          `json:"header"`
	Value       string          `json:"value"`
	Requirement json.RawMessage `json:"requirement"`
	Payload     json.RawMessage `json:"payload"`
}

// pay builds the payment for a 402 carrying transaction. With node it is the
// official client (x402pay.mjs) that reads the 402 and builds it; without,
// it is built here the same way, so the service's side is still tested.
// edit, when set, changes the requirements before the client sees them (a
// tampered or stale 402); v1Only hides the v2 header, so the client falls
// back to the v1 body and X-PAYMENT.
func pay(t *testing.T, node string, resp *http.Response, body []byte, transaction string, edit func(*x402.Requirement), v1Only bool) payment {
	t.Helper()
	p, stderr, ok := tryPay(t, node, resp, body, transaction, edit, v1Only)
	if !ok {
		t.Fatalf("x402pay.mjs: %s", stderr)
	}
	return p
}

func tryPay(t *testing.T, node string, resp *http.Response, body []byte, transaction string, edit func(*x402.Requirement), v1Only bool) (payment, string, bool) {
	t.Helper()
	header := resp.Header.Get(x402.HeaderRequired)
	var req x402.PaymentRequired
	if b, err := base64.StdEncoding.DecodeString(header); err != nil || json.Unmarshal(b, &req) != nil || len(req.Accepts) != 1 {
		t.Fatalf("PAYMENT-REQUIRED is not base64 JSON with one requirement: %q", header)
	}
	if edit != nil {
		edit(&req.Accepts[0])
		header = req.Header()
	}
	if node != "" {
		headers := map[string]string{"Content-Type": resp.Header.Get("Content-Type")}
		if !v1Only {
			headers[x402.HeaderRequired] = header
		}
		out, stderr, ok := runNodeScript(t, node, "x402pay.mjs", map[string]any{"status": resp.StatusCode, "headers": headers, "body": json.RawMessage(body), "transaction": transaction})
		if !ok {
			return payment{}, stderr, false
		}
		var p payment
		if err := json.Unmarshal(out, &p); err != nil || p.Header == "" || p.Value == "" {
			t.Fatalf("x402pay.mjs: %v: %s", err, out)
		}
		return p, "", true
	}
	var v any
	var p payment
	if v1Only {
		var v1 x402.V1Body
		if json.Unmarshal(body, &v1) != nil || len(v1.Accepts) != 1 {
			t.Fatalf("not a v1 402 body: %s", body)
		}
		v = map[string]any{"x402Version": 1, "scheme": v1.Accepts[0].Scheme, "network": v1.Accepts[0].Network, "payload": map[string]string{"transaction": transaction}}
		p.Header, p.Requirement = x402.HeaderPaymentV1, mustJSON(t, v1.Accepts[0])
	} else {
		v = map[string]any{"x402Version": 2, "resource": req.Resource, "accepted": req.Accepts[0], "payload": map[string]string{"transaction": transaction}}
		p.Header, p.Requirement = x402.HeaderSignature, mustJSON(t, req.Accepts[0])
	}
	p.Payload = mustJSON(t, v)
	p.Value = base64.StdEncoding.EncodeToString(p.Payload)
	return p, "", true
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func decodeRequired(t *testing.T, what string, resp *http.Response) x402.PaymentRequired {
	t.Helper()
	var req x402.PaymentRequired
	b, err := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderRequired))
	if err != nil || json.Unmarshal(b, &req) != nil || req.X402Version != 2 || len(req.Accepts) != 1 {
		t.Fatalf("%s: PAYMENT-REQUIRED is not a v2 PaymentRequired with one requirement: %q", what, resp.Header.Get(x402.HeaderRequired))
	}
	return req
}

func decodeSettlement(t *testing.T, name string, resp *http.Response) x402.Settlement {
	t.Helper()
	var s x402.Settlement
	b, err := base64.StdEncoding.DecodeString(resp.Header.Get(name))
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("%s is not base64 JSON: %q", name, resp.Header.Get(name))
	}
	return s
}

type paidReport struct {
	URL    string            `json:"url"`
	Checks []json.RawMessage `json:"checks"`
	Deep   *report.Deep      `json:"deep"`
}

// The paid deep scan bought the way an agent buys it, through the whole
// service (edge in front of origin): the free allowance runs out and the
// edge answers 402 with requirements pointing at the gateway; the gateway
// answers 402 with its own requirements (the facilitator's fee payer
// included); the official x402 client (@x402/core) builds the payment from
// that 402; the gateway verifies and settles it through a facilitator on
// loopback and returns the deep report with the settlement; the same
// payment again replays the answer without a second settlement; forged,
// expired and altered payments are refused with the reason. Without a
// payee nothing is sold: 429 over the allowance, 503 at the gateway.
func TestPaidDeepScanEndToEnd(t *testing.T) {
	node, ok := testenv.OptionalNode(t, "@x402/core")
	if !ok {
		node = ""
		t.Log("the official @x402/core client parts are left out: payments are built by the test itself and the 402s and settlements are checked only by Go")
	}
	t.Run("paid", func(t *testing.T) { paidDeepScan(t, node) })
	t.Run("no payee", func(t *testing.T) { noPayee(t) })
}

func paidDeepScan(t *testing.T, node string) {
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	env := map[string]string{
		"AGENTREADY_PAYTO":               e2ePayee,
		"AGENTREADY_FACILITATOR_URL":     fac.URL,
		"AGENTREADY_FACILITATOR_PRIVATE": "1",
		"AGENTREADY_FREE_DAILY":          "2",
	}
	svc := start(t, stack.Options{Env: func(k string) string { return env[k] }})
	if m := svc.PaymentMode(); !strings.HasPrefix(m, "payments: on") || !strings.Contains(m, e2ePayee) || !strings.Contains(m, fac.URL) {
		t.Errorf("payment mode: %s", m)
	}
	s := site(t, "full")
	gateway := svc.URL + x402.GatewayPath

	// The free allowance, then the edge's 402.
	scan := svc.URL + "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	var resp *http.Response
	var b []byte
	free := 0
	for i := 0; i < 5; i++ {
		resp, b = payCall(t, "GET", scan, "")
		if resp.StatusCode != 200 {
			break
		}
		free++
		var rep paidReport
		if json.Unmarshal(b, &rep) != nil || len(rep.Checks) == 0 || rep.Deep != nil {
			t.Errorf("free scan %d: not a report without a deep block: %.300s", free, b)
		}
	}
	if free != 2 || resp.StatusCode != 402 {
		t.Fatalf("after %d free scans (allowance 2): %d %.300s", free, resp.StatusCode, b)
	}
	if e := envelope(t, "the edge's 402", resp, b); e.Code != "payment_required" {
		t.Errorf("the edge's 402: code %q", e.Code)
	}
	officialAccepts402(t, node, "the edge's 402", resp, b)
	edgeReq := decodeRequired(t, "the edge's 402", resp)
	if edgeReq.Resource.URL != gateway {
		t.Fatalf("the edge's 402 points at %q, not the gateway %s", edgeReq.Resource.URL, gateway)
	}
	ea := edgeReq.Accepts[0]
	if ea.Scheme != "exact" || ea.Network != x402.SolanaMainnet || ea.Amount != "100000" || ea.Asset != x402.USDCMint || ea.PayTo != e2ePayee {
		t.Errorf("the edge's requirements: %+v", ea)
	}

	// The gateway's own 402, with the facilitator's fee payer.
	resp, b = buyDeepScan(t, svc, s.URL)
	if resp.StatusCode != 402 {
		t.Fatalf("the gateway without payment: %d %.300s", resp.StatusCode, b)
	}
	if e := envelope(t, "the gateway's 402", resp, b); e.Code != "payment_required" {
		t.Errorf("the gateway's 402: code %q", e.Code)
	}
	officialAccepts402(t, node, "the gateway's 402", resp, b)
	gwReq := decodeRequired(t, "the gateway's 402", resp)
	ga := gwReq.Accepts[0]
	if gwReq.Resource.URL != gateway || ga.Extra["feePayer"] != facilitator.FeePayer {
		t.Errorf("the gateway's requirements: resource %q, fee payer %q", gwReq.Resource.URL, ga.Extra["feePayer"])
	}
	if ga.Scheme != ea.Scheme || ga.Network != ea.Network || ga.Amount != ea.Amount || ga.Asset != ea.Asset || ga.PayTo != ea.PayTo {
		t.Errorf("the edge asks for %+v, the gateway for %+v", ea, ga)
	}
	unpaid, unpaidBody := resp, b

	// The purchase.
	p := pay(t, node, unpaid, unpaidBody, facilitator.Token("E2EPayer", "100000", e2ePayee, "e2e-1"), nil, false)
	var chosen x402.Requirement
	if p.Header != x402.HeaderSignature || json.Unmarshal(p.Requirement, &chosen) != nil || !reflect.DeepEqual(chosen, ga) {
		t.Errorf("the client pays with %s for %s; the gateway asked for %+v", p.Header, p.Requirement, ga)
	}
	resp, b = buyDeepScan(t, svc, s.URL, p.Header, p.Value)
	if resp.StatusCode != 200 {
		t.Fatalf("paid: %d %.500s", resp.StatusCode, b)
	}
	var rep paidReport
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Checks) != 48 || rep.Deep == nil || rep.Deep.Requests == 0 || rep.Deep.Deadline == "" || len(rep.Deep.Probes) == 0 {
		t.Errorf("not a full report with a deep block: %.500s", b)
	}
	settled := decodeSettlement(t, x402.HeaderResponse, resp)
	if !settled.Success || settled.Transaction == "" || settled.Network != x402.SolanaMainnet || settled.Payer != "E2EPayer" || settled.Amount != "100000" {
		t.Errorf("settlement: %+v", settled)
	}
	officialSettlement(t, node, x402.HeaderResponse, resp)
	if exposed := strings.Join(resp.Header.Values("Access-Control-Expose-Headers"), ","); !strings.Contains(exposed, x402.HeaderResponse) {
		t.Errorf("a browser client cannot read PAYMENT-RESPONSE: Access-Control-Expose-Headers %q", exposed)
	}
	verifies, settles := fac.Calls("/verify"), fac.Calls("/settle")
	if len(verifies) != 1 || len(settles) != 1 {
		t.Fatalf("one purchase: %d verify, %d settle calls", len(verifies), len(settles))
	}
	var sent struct {
		PaymentPayload json.RawMessage `json:"paymentPayload"`
	}
	if json.Unmarshal(settles[0].Body, &sent) != nil || !sameJSON(sent.PaymentPayload, p.Payload) {
		t.Errorf("the facilitator settled %s, not the payment the client built: %s", sent.PaymentPayload, p.Payload)
	}

	// A lost answer: the same payment again, with its receipt, is the same
	// purchase; without the receipt it is someone else's, refused.
	receipt := resp.Header.Get("Payment-Receipt")
	if resp3, b3 := buyDeepScan(t, svc, s.URL, p.Header, p.Value); resp3.StatusCode != 402 || !strings.Contains(string(b3), "payment_already_used") {
		t.Errorf("the payment again without its receipt: %d %.300s", resp3.StatusCode, b3)
	}
	resp2, b2 := buyDeepScan(t, svc, s.URL, p.Header, p.Value, "Payment-Receipt", receipt)
	if resp2.StatusCode != 200 || !bytes.Equal(b2, b) || resp2.Header.Get(x402.HeaderResponse) != resp.Header.Get(x402.HeaderResponse) || resp2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d, same body %v, same settlement %v, replayed %q", resp2.StatusCode, bytes.Equal(b2, b),
			resp2.Header.Get(x402.HeaderResponse) == resp.Header.Get(x402.HeaderResponse), resp2.Header.Get("Idempotent-Replayed"))
	}
	if v, st := len(fac.Calls("/verify")), len(fac.Calls("/settle")); v != 1 || st != 1 {
		t.Errorf("the replay reached the facilitator: %d verify, %d settle calls", v, st)
	}

	// Payments the facilitator refuses, and payments for other terms than
	// the gateway's, which it refuses before asking the facilitator.
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, c := range []struct {
		name, tx, reason string
		edit             func(*x402.Requirement)
		facilitator      bool
	}{
		{"forged", b64("forged:e2e"), "invalid_exact_svm_payload_transaction_signature", nil, true},
		{"expired", b64("expired:e2e"), "invalid_transaction_state", nil, true},
		{"amount changed in accepted", facilitator.Token("E2EPayer", "1", e2ePayee, "e2e-2"), "invalid_payment_requirements",
			func(r *x402.Requirement) { r.Amount = "1" }, false},
		{"payTo changed in accepted", facilitator.Token("E2EPayer", "100000", "Ma11ory1111111111111111111111111111111111111", "e2e-3"), "invalid_payment_requirements",
			func(r *x402.Requirement) { r.PayTo = "Ma11ory1111111111111111111111111111111111111" }, false},
	} {
		before := len(fac.Calls("/verify"))
		bad := pay(t, node, unpaid, unpaidBody, c.tx, c.edit, false)
		resp, b := buyDeepScan(t, svc, s.URL, bad.Header, bad.Value)
		var body struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != 402 || body.Reason != c.reason || resp.Header.Get(x402.HeaderRequired) == "" {
			t.Errorf("%s: %d, reason %q (want %q): %.300s", c.name, resp.StatusCode, body.Reason, c.reason, b)
			continue
		}
		if e := envelope(t, c.name, resp, b); e.Code != "payment_invalid" {
			t.Errorf("%s: code %q", c.name, e.Code)
		}
		officialAccepts402(t, node, c.name, resp, b)
		if asked := len(fac.Calls("/verify")) > before; asked != c.facilitator {
			t.Errorf("%s: the facilitator was asked to verify: %v", c.name, asked)
		}
	}
	if n := len(fac.Calls("/settle")); n != 1 {
		t.Errorf("refused payments were settled: %d settle calls", n)
	}

	if node != "" {
		// The client's own spend controls run on our 402: asked for 2 USDC,
		// over its default cap of $1 a payment, it refuses to pay.
		_, stderr, ok := tryPay(t, node, unpaid, unpaidBody, facilitator.Token("E2EPayer", "2000000", e2ePayee, "e2e-4"), func(r *x402.Requirement) { r.Amount = "2000000" }, false)
		if ok || !strings.Contains(stderr, "spendControls") {
			t.Errorf("the client paid 2 USDC, over its default cap: %v %s", ok, stderr)
		}
	}

	// A v1 client: X-PAYMENT from the v1 body, X-PAYMENT-RESPONSE back.
	p1 := pay(t, node, unpaid, unpaidBody, facilitator.Token("E2EPayerV1", "100000", e2ePayee, "e2e-v1"), nil, true)
	if p1.Header != x402.HeaderPaymentV1 {
		t.Fatalf("from the v1 body the client pays with %s", p1.Header)
	}
	resp, b = buyDeepScan(t, svc, s.URL, p1.Header, p1.Value)
	if resp.StatusCode != 200 || resp.Header.Get(x402.HeaderResponseV1) == "" || resp.Header.Get(x402.HeaderResponse) != "" {
		t.Fatalf("v1 payment: %d %v %.300s", resp.StatusCode, resp.Header, b)
	}
	if s1 := decodeSettlement(t, x402.HeaderResponseV1, resp); !s1.Success || s1.Network != x402.SolanaV1Network || s1.Payer != "E2EPayerV1" {
		t.Errorf("v1 settlement: %+v", s1)
	}
	officialSettlement(t, node, x402.HeaderResponseV1, resp)
	if n := len(fac.Calls("/settle")); n != 2 {
		t.Errorf("two purchases: %d settle calls", n)
	}
}

func noPayee(t *testing.T) {
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	env := map[string]string{"AGENTREADY_FREE_DAILY": "1", "AGENTREADY_FACILITATOR_URL": fac.URL, "AGENTREADY_FACILITATOR_PRIVATE": "1"}
	svc := start(t, stack.Options{Env: func(k string) string { return env[k] }})
	if m := svc.PaymentMode(); !strings.HasPrefix(m, "payments: off") {
		t.Errorf("payment mode: %s", m)
	}
	s := site(t, "empty")
	scan := svc.URL + "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	if resp, b := payCall(t, "GET", scan, ""); resp.StatusCode != 200 {
		t.Fatalf("the free scan: %d %.300s", resp.StatusCode, b)
	}
	resp, b := payCall(t, "GET", scan, "")
	if resp.StatusCode != 429 || resp.Header.Get(x402.HeaderRequired) != "" || resp.Header.Get("Retry-After") == "" || strings.Contains(string(b), "accepts") {
		t.Errorf("over the allowance without a payee: %d, PAYMENT-REQUIRED %q, Retry-After %q: %.300s",
			resp.StatusCode, resp.Header.Get(x402.HeaderRequired), resp.Header.Get("Retry-After"), b)
	}
	if e := envelope(t, "over the allowance", resp, b); e.Code != "allowance_exhausted" {
		t.Errorf("over the allowance: code %q", e.Code)
	}
	tx := facilitator.Token("E2EPayer", "100000", e2ePayee, "off")
	v2, _ := json.Marshal(map[string]any{"x402Version": 2, "accepted": x402.Config{PayTo: e2ePayee}.Requirement(), "payload": map[string]string{"transaction": tx}})
	for _, hdr := range [][]string{nil, {x402.HeaderSignature, base64.StdEncoding.EncodeToString(v2)}} {
		resp, b := buyDeepScan(t, svc, s.URL, hdr...)
		if resp.StatusCode != 503 || resp.Header.Get(x402.HeaderRequired) != "" {
			t.Errorf("the gateway without a payee (payment sent: %v): %d %.300s", hdr != nil, resp.StatusCode, b)
		}
		if e := envelope(t, "the gateway without a payee", resp, b); e.Code != "payments_disabled" {
			t.Errorf("the gateway without a payee: code %q", e.Code)
		}
	}
	if n := len(fac.Calls("")); n != 0 {
		t.Errorf("a service that sells nothing called the facilitator %d times", n)
	}
}
