package origin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/origin"
)

// benchGateway is an origin selling deep scans through a local
// facilitator, with the full fixture site to scan and the 402's terms.
func benchGateway(b *testing.B) (*testOrigin, *facilitator.Server, string, x402.PaymentRequired) {
	fac := facilitator.Start()
	b.Cleanup(fac.Close)
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: loopback.Policy()}})
	o := serveOrigin(b, origin.Config{Payment: x402.Config{PayTo: testPayee}, FacilitatorURL: fac.URL, AllowPrivate: true}, embedded(b), sc)
	s := site(b, "full")
	req, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+s.URL+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	var pr x402.PaymentRequired
	decodeB64JSON(b, resp.Header.Get("PAYMENT-REQUIRED"), &pr)
	return o, fac, s.URL, pr
}

// BenchmarkGatewayPurchase: one whole paid deep scan of the full fixture
// site (read, verify, reserve, settle, scan, record) per op.
func BenchmarkGatewayPurchase(b *testing.B) {
	o, _, target, pr := benchGateway(b)
	b.ResetTimer()
	for i := range b.N {
		sp := facilitator.Spelling{Header: x402.HeaderSignature, Value: payV2(b, pr, facilitator.Token("Bench", pr.Accepts[0].Amount, testPayee, fmt.Sprint("p", i)))}
		if status, _, body, err := sendPayment(o, target, sp); err != nil || status != 200 {
			b.Fatalf("%d %v %.200s", status, err, body)
		}
	}
}

// BenchmarkGatewayUnsettleable: what a payment that verifies but never
// settles costs the service per op (read, verify, reserve, a refused
// /settle); it costs the site nothing.
func BenchmarkGatewayUnsettleable(b *testing.B) {
	o, _, target, pr := benchGateway(b)
	b.ResetTimer()
	for i := range b.N {
		sp := facilitator.Spelling{Header: x402.HeaderSignature, Value: payV2(b, pr, facilitator.Token("Broke", pr.Accepts[0].Amount, testPayee, fmt.Sprint(facilitator.Unsettleable, i)))}
		if status, _, body, err := sendPayment(o, target, sp); err != nil || status != 402 {
			b.Fatalf("%d %v %.200s", status, err, body)
		}
	}
}

// BenchmarkGatewayReplay: the buyer collecting a settled report again
// with its receipt.
func BenchmarkGatewayReplay(b *testing.B) {
	o, _, target, pr := benchGateway(b)
	sp := facilitator.Spelling{Header: x402.HeaderSignature, Value: payV2(b, pr, facilitator.Token("Bench", pr.Accepts[0].Amount, testPayee, "replayed"))}
	status, h, body, err := sendPayment(o, target, sp)
	if err != nil || status != 200 {
		b.Fatalf("%d %v %.200s", status, err, body)
	}
	receipt := h.Get("Payment-Receipt")
	b.ResetTimer()
	for range b.N {
		if status, _, _, err := sendPayment(o, target, sp, "Payment-Receipt", receipt); err != nil || status != 200 {
			b.Fatalf("%d %v", status, err)
		}
	}
}
