package gather

import (
	"net/http"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/wellknown"
)

// The payments family: /.well-known/x402 and every 402 answer of the scan
// with the x402 requirements it carries. Its check is in
// engine/checks/payments.go.

// X402Doc is /.well-known/x402.
type X402Doc struct {
	Resp     *fetch.Response
	Required *wellknown.PaymentRequired // nil unless found
}

// PaymentAnswer is a 402 seen anywhere in the scan with the x402
// requirements read from its PAYMENT-REQUIRED header or body.
type PaymentAnswer struct {
	Resp     *fetch.Response
	Required *wellknown.PaymentRequired
}

var x402Gatherer = Define(X402, "/.well-known/x402 (x402 payment requirements).", nil,
	func(c *Ctx) (*X402Doc, error) {
		r := fetchDoc(c, "/.well-known/x402", acceptJSON)
		out := &X402Doc{Resp: r}
		if r.Found() {
			out.Required = wellknown.ParseX402("", r.Body)
		}
		return out, nil
	})

var paymentsGatherer = Define(Payments, "Every 402 answer of the scan with the x402 requirements it carries (no request of its own).", []AnyKey{Responses},
	func(c *Ctx) ([]PaymentAnswer, error) {
		var out []PaymentAnswer
		for _, r := range Get(c, Responses) {
			if r.Err == nil && r.Status == http.StatusPaymentRequired {
				out = append(out, PaymentAnswer{Resp: r, Required: wellknown.ParseX402(r.Header.Get("PAYMENT-REQUIRED"), r.Body)})
			}
		}
		return out, nil
	})
