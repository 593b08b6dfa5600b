// Package webhook signs and verifies agentready's monitor deliveries: the
// webhooks a monitor POSTs to its callback_url after each scheduled scan
// (docs/webhooks.md). The service's sender and a receiver written in Go use
// the same code, so the two cannot drift apart.
//
// Every delivery carries two signatures over the same raw body, made with the
// one secret POST /api/monitors returned:
//
//   - X-Scanner-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>, Stripe's
//     form; the key is the secret string's bytes as they are, "whsec_"
//     included, and the message is "<t>.<raw body>".
//   - webhook-id, webhook-timestamp, webhook-signature: Standard Webhooks
//     v1 (https://www.standardwebhooks.com), so receivers can use that
//     project's libraries; the key is the base64-decoded part after
//     "whsec_", the message "<id>.<t>.<raw body>", the output base64.
//
// Both refuse a timestamp more than [Tolerance] away from now, in either
// direction; that window is what makes a captured delivery useless for a
// replay later. Receivers deduplicate on webhook-id ([Event.ID]), which stays
// the same across retries and redeliveries while each attempt is signed anew.
//
// The package depends only on the standard library and the official
// Standard Webhooks Go library, so a receiver can import it cheaply.
package webhook
