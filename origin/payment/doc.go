// Package payment sells the deep scan over x402: it issues the payment
// requirements (v2 PAYMENT-REQUIRED header and v1 body), checks a payment
// against them, verifies and settles it through an x402 facilitator's HTTP
// API (/supported, /verify, /settle), and keeps a record per payment in the
// state store so that one payment buys one scan, however often, in whichever
// envelope and on whichever origin it is sent (the record is keyed on
// x402.PaymentID). Nothing paid (the deep probes, the report) is handed out
// before the settlement succeeded. The HTTP gateway and the MCP deep_scan
// tool both adapt Gateway.Begin and Purchase.Finish.
package payment
