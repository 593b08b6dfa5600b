package checks

import (
	"fmt"

	"github.com/agentready/agentready/engine/gather"
)

// Checks of the payments family (engine/gather/payments.go): x402 payments
// (2.11).

func x402(in gather.Source) Outcome {
	answers, doc, spec := gather.Get(in, gather.Payments), gather.Get(in, gather.X402), gather.Get(in, gather.Spec)
	var invalid []string
	for _, ans := range answers {
		r, p := ans.Resp, ans.Required
		if p.Valid() {
			return pass(fmt.Sprintf("A 402 from %s carries x402 v%d requirements (%s) in the %s.", r.RequestURL, p.Version, plural(p.Accepts, "payment option", "payment options"), p.Source), p, at(r))
		}
		invalid = append(invalid, r.RequestURL)
	}
	if r := doc.Resp; r.Found() {
		p := doc.Required
		if p.Valid() {
			return pass(fmt.Sprintf("/.well-known/x402 declares x402 v%d payment requirements.", p.Version), p, at(r))
		}
		return partial("/.well-known/x402 exists but does not hold valid x402 requirements.", "", p, at(r))
	}
	if len(invalid) > 0 {
		return partial("A 402 answer carries no valid x402 payment requirements ("+invalid[0]+").", "", map[string]any{"urls": invalid}, invalid[0])
	}
	if spec.Spec != nil && spec.Spec.Declares402() {
		return partial("The OpenAPI document declares 402 responses, but no x402 requirements were seen.", "", nil, at(spec.Resp))
	}
	return na("No payment-required (402) response anywhere on the site.")
}
