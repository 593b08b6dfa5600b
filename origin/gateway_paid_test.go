package origin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/internal/facilitator"
	"github.com/agentready/agentready/internal/sse"
	"github.com/agentready/agentready/origin"
)

// spelling is one way to send a payment: the header and its value.
type spelling struct {
	name, header, value string
	v1                  bool
}

// spellings are envelopes of one payment (the transaction tx) that the
// facilitator reads alike: the gateway must see one purchase in all of them.
func spellings(t *testing.T, req x402.PaymentRequired, tx string) []spelling {
	t.Helper()
	enc := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v2 := func(payload map[string]any) map[string]any {
		return map[string]any{"x402Version": 2, "resource": req.Resource, "accepted": req.Accepts[0], "payload": payload}
	}
	v1 := map[string]any{"x402Version": 1, "scheme": "exact", "network": x402.V1Name(req.Accepts[0].Network), "payload": map[string]any{"transaction": tx}}
	spaced := func(v any) []byte {
		b, _ := json.MarshalIndent(v, "\t", "   ") // a map: members in another order than the client's
		return append([]byte("\n "), b...)
	}
	std := base64.StdEncoding.EncodeToString
	return []spelling{
		{"v2 as the client sends it", "PAYMENT-SIGNATURE", payV2(t, req, tx), false},
		{"v2 with a member added to its payload", "PAYMENT-SIGNATURE", std(enc(v2(map[string]any{"transaction": tx, "n": 1}))), false},
		{"v1 in X-PAYMENT", "X-PAYMENT", std(enc(v1)), true},
		{"v2 in unpadded base64url", "PAYMENT-SIGNATURE", base64.RawURLEncoding.EncodeToString(enc(v2(map[string]any{"transaction": tx}))), false},
		{"v2 spaced, members reordered", "PAYMENT-SIGNATURE", std(spaced(v2(map[string]any{"transaction": tx}))), false},
		{"v1 spaced, with a member added", "X-PAYMENT", std(spaced(map[string]any{"x402Version": 1, "scheme": "exact", "network": v1["network"],
			"payload": map[string]any{"transaction": tx, "memo": "again"}})), true},
	}
}

// sendPayment posts a purchase without failing the test (for goroutines).
func sendPayment(o *testOrigin, target string, sp spelling) (int, http.Header, []byte, error) {
	req, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+target+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sp.header, sp.value)
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
func sendUntilServed(t *testing.T, o *testOrigin, target string, sp spelling) (int, http.Header, []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, h, b, err := sendPayment(o, target, sp)
		if err != nil {
			t.Fatalf("%s: %v", sp.name, err)
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

// One transaction is one purchase whatever envelope carries it: every
// spelling of a settled payment replays its report for the same site
// (with the settlement header of its own version) and is
// payment_already_used for another, and the facilitator is asked once.
func TestGatewayOnePaymentWhateverItsEnvelope(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s, other := site(t, "full"), site(t, "empty")
	req := requirements(t, o, s.URL)
	tx := facilitator.Token("Respeller", req.Accepts[0].Amount, testPayee, "one")
	all := spellings(t, req, tx)

	resp, first := gatewayPost(t, o, s.URL, all[0].header, all[0].value)
	if resp.StatusCode != 200 {
		t.Fatalf("the purchase: %d %s", resp.StatusCode, first)
	}
	hits := len(s.Hits())
	for _, sp := range all {
		resp, b := gatewayPost(t, o, s.URL, sp.header, sp.value)
		settlement, absent := "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"
		if sp.v1 {
			settlement, absent = absent, settlement
		}
		if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "true" || string(b) != string(first) ||
			resp.Header.Get(settlement) == "" || resp.Header.Get(absent) != "" {
			t.Errorf("%s, same site: %d replayed=%q same report %v, %s=%q", sp.name, resp.StatusCode,
				resp.Header.Get("Idempotent-Replayed"), string(b) == string(first), settlement, resp.Header.Get(settlement))
		}
		resp, b = gatewayPost(t, o, other.URL, sp.header, sp.value)
		var body struct{ Reason, Code string }
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != 402 || body.Reason != "payment_already_used" || body.Code != "payment_invalid" {
			t.Errorf("%s, another site: %d %s", sp.name, resp.StatusCode, b)
		}
	}
	if v, st := fac.CallsWith("/verify", tx), fac.CallsWith("/settle", tx); v != 1 || st != 1 {
		t.Errorf("%d verifications and %d settlements for one payment", v, st)
	}
	if len(s.Hits()) != hits || len(other.Hits()) != 0 {
		t.Errorf("replays reached the sites: %d more requests to the site, %d to the other", len(s.Hits())-hits, len(other.Hits()))
	}
}

// Ten re-spellings of one payment sent at once buy one scan: one
// verification, one settlement, and the requests of one scan at the site.
func TestGatewayConcurrentRespellings(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	// One scan's worth of requests, measured on a site of its own.
	alone := site(t, "full")
	req := requirements(t, o, alone.URL)
	if resp, b := gatewayPost(t, o, alone.URL, "PAYMENT-SIGNATURE", payV2(t, req, facilitator.Token("Once", req.Accepts[0].Amount, testPayee, "alone"))); resp.StatusCode != 200 {
		t.Fatalf("one purchase: %d %s", resp.StatusCode, b)
	}
	oneScan := len(alone.Hits())

	s := site(t, "full")
	tx := facilitator.Token("Racer", req.Accepts[0].Amount, testPayee, "race")
	all := spellings(t, req, tx)
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
			status, h, b, err := sendPayment(o, s.URL, all[i%len(all)])
			if err != nil {
				status = -1
			}
			answers[i] = answer{status, h.Get("Idempotent-Replayed") == "true", string(b)}
		}()
	}
	close(start)
	wg.Wait()
	served := 0
	var report string
	for i, a := range answers {
		sp := all[i%len(all)]
		if a.status == http.StatusConflict { // in flight: its answer comes once the first is done
			status, h, b := sendUntilServed(t, o, s.URL, sp)
			a = answer{status, h.Get("Idempotent-Replayed") == "true", string(b)}
		}
		if a.status != 200 {
			t.Errorf("%s: %d %.200s", sp.name, a.status, a.body)
			continue
		}
		if !a.replayed {
			served++
		}
		if report == "" {
			report = a.body
		} else if a.body != report {
			t.Errorf("%s: another report than the others", sp.name)
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

// A purchase streamed to a client that disconnects after each event in
// turn: no paid event ever arrives before payment.settled, and afterwards
// either nothing was settled and the payment still buys a scan, or it was
// settled exactly once and sending it again replays the report.
func TestGatewayStreamDisconnects(t *testing.T) {
	// Heartbeats every few milliseconds: a client that left is noticed at
	// once, so disconnects land both before and after the scan finished.
	o, fac := gatewayOriginConfig(t, origin.Config{Payment: x402.Config{PayTo: testPayee}, Heartbeat: 5 * time.Millisecond})
	s := site(t, "full")
	req := requirements(t, o, s.URL)

	full := streamPurchase(t, o, s.URL, payV2(t, req, facilitator.Token("Stayer", req.Accepts[0].Amount, testPayee, "stay")), -1)
	var names []string
	for _, e := range full {
		names = append(names, e.Name)
	}
	// scan.started, 48 checks, 5 signals, payment.settled, the probes, scan.completed.
	if len(full) < 1+48+5+1+1+1 || full[len(full)-1].Name != "scan.completed" {
		t.Fatalf("a whole stream: %v", names)
	}
	checkPaidAfterSettled(t, "the whole stream", full)

	outcomes := map[string]int{}
	for k := 0; k < len(full); k++ {
		tx := facilitator.Token("Leaver", req.Accepts[0].Amount, testPayee, fmt.Sprintf("leave-%d", k))
		sp := spelling{name: fmt.Sprintf("left after %d events", k), header: "PAYMENT-SIGNATURE", value: payV2(t, req, tx)}
		got := streamPurchase(t, o, s.URL, sp.value, k)
		checkPaidAfterSettled(t, sp.name, got)
		sawPaid, completed := false, ""
		for _, e := range got {
			switch e.Name {
			case "payment.settled", "probe":
				sawPaid = true
			case "scan.completed":
				sawPaid, completed = true, e.Data
			}
		}

		status, h, b := sendUntilServed(t, o, s.URL, sp)
		replayed := h.Get("Idempotent-Replayed") == "true"
		switch settles := fac.CallsWith("/settle", tx); {
		case status != 200:
			t.Errorf("%s: the same payment afterwards: %d %.200s", sp.name, status, b)
		case settles != 1:
			t.Errorf("%s: %d settlements after the payment was sent again, want exactly 1", sp.name, settles)
		case sawPaid && !replayed:
			t.Errorf("%s: paid events reached the client, yet nothing was settled then (the payment bought a scan afterwards)", sp.name)
		case completed != "" && completed != string(b):
			t.Errorf("%s: the replay is not the report the stream sent", sp.name)
		case replayed:
			outcomes["settled, then replayed"]++
		default:
			outcomes["released, then bought a scan"]++
		}
	}
	t.Logf("%d disconnects: %v", len(full), outcomes)
}

// checkPaidAfterSettled fails when a paid event (a probe, the report) came
// before payment.settled.
func checkPaidAfterSettled(t *testing.T, what string, events []sse.Event) {
	t.Helper()
	for _, e := range events {
		switch e.Name {
		case "payment.settled":
			return
		case "probe", "scan.completed":
			t.Errorf("%s: %s before payment.settled", what, e.Name)
			return
		}
	}
}

// streamPurchase sends a purchase asking for a stream and reads n events
// (every one when n < 0, heartbeats not counted), then drops the
// connection.
func streamPurchase(t *testing.T, o *testOrigin, target, pay string, n int) []sse.Event {
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
	return got
}

// Without a stream the answer is the settled report or nothing: a client
// that leaves while its scan runs does not stop it, and the same payment
// then replays the report it paid for.
func TestGatewayJSONCallerLeaves(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s := site(t, "full")
	req := requirements(t, o, s.URL)
	tx := facilitator.Token("Impatient", req.Accepts[0].Amount, testPayee, "json-left")
	sp := spelling{name: "json", header: "PAYMENT-SIGNATURE", value: payV2(t, req, tx)}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { // leave once the scan has reached the site
		for deadline := time.Now().Add(10 * time.Second); len(s.Hits()) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	hreq, _ := http.NewRequestWithContext(ctx, "POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+s.URL+`"}`))
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(sp.header, sp.value)
	if resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(hreq); err == nil {
		resp.Body.Close()
		t.Fatalf("the request was answered (%d) before the client left", resp.StatusCode)
	}
	status, h, b := sendUntilServed(t, o, s.URL, sp)
	var rep deepReport
	if status != 200 || h.Get("Idempotent-Replayed") != "true" || json.Unmarshal(b, &rep) != nil || rep.Deep == nil {
		t.Errorf("the same payment after the client left: %d replayed=%q %.200s", status, h.Get("Idempotent-Replayed"), b)
	}
	if n := fac.CallsWith("/settle", tx); n != 1 {
		t.Errorf("%d settlements", n)
	}
}

// The MCP deep_scan tool: nothing paid reaches the caller before the
// settlement (no probe in a progress notification), and a caller that
// cancels the call mid-scan either settled nothing and keeps its payment
// or settled once and gets the report again.
func TestMCPDeepScanPaidAfterSettlement(t *testing.T) {
	o, fac := gatewayOrigin(t, testPayee)
	s := site(t, "full")
	type note struct {
		message string
		settled int // settlements made when it arrived
	}
	var mu sync.Mutex
	var notes []note
	client := mcp.NewClient(&mcp.Implementation{Name: "agentready-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			notes = append(notes, note{r.Params.Message, len(fac.Calls("/settle"))})
			mu.Unlock()
		}})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: o.URL + "/api/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var pr x402.PaymentRequired
	structured(t, call(t, cs, "deep_scan", map[string]any{"url": s.URL}), &pr)
	payment := func(nonce string) (map[string]any, string) {
		tx := facilitator.Token("McpPayer", pr.Accepts[0].Amount, pr.Accepts[0].PayTo, nonce)
		return map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0], "payload": map[string]string{"transaction": tx}}, tx
	}
	deepScan := func(ctx context.Context, pay map[string]any) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParams{Name: "deep_scan", Arguments: map[string]any{"url": s.URL}, Meta: mcp.Meta{"x402/payment": pay}}
		params.SetProgressToken("deep-" + fmt.Sprint(time.Now().UnixNano()))
		return cs.CallTool(ctx, params)
	}

	pay, _ := payment("mcp-progress")
	res, err := deepScan(context.Background(), pay)
	if err != nil || res.IsError {
		t.Fatalf("paid deep_scan: %v %+v", err, res)
	}
	var out struct {
		Deep *struct {
			Probes []struct{ ID string } `json:"probes"`
		} `json:"deep"`
	}
	structured(t, res, &out)
	if out.Deep == nil || len(out.Deep.Probes) == 0 {
		t.Fatal("no deep probes in the report")
	}
	mu.Lock()
	for _, n := range notes {
		for _, p := range out.Deep.Probes {
			if n.settled == 0 && strings.Contains(n.message, p.ID) {
				t.Errorf("a progress notification before the settlement names the probe %s: %q", p.ID, n.message)
			}
		}
	}
	mu.Unlock()

	// Cancel the call once the scan has reached the site.
	pay, tx := payment("mcp-cancel")
	ctx, cancel := context.WithCancel(context.Background())
	hits := len(s.Hits())
	go func() {
		for deadline := time.Now().Add(10 * time.Second); len(s.Hits()) == hits && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if res, err := deepScan(ctx, pay); err == nil && !res.IsError {
		t.Logf("the call finished before it was canceled")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err = deepScan(context.Background(), pay)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(errText(res), "being served right now") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res.IsError {
		t.Errorf("the same payment after a canceled call: %s", errText(res))
	}
	if n := fac.CallsWith("/settle", tx); n != 1 {
		t.Errorf("%d settlements of the payment of a canceled call and its retry, want 1", n)
	}
}
