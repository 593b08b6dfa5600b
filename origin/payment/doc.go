// Package payment sells the deep scan over x402: it issues the payment
// requirements (v2 PAYMENT-REQUIRED header and v1 body), reads a payment
// strictly and checks it against them, verifies and settles it through an
// x402 facilitator's HTTP API (/supported, /verify, /settle), and keeps a
// record per payment in the state store so that one payment buys one scan,
// however often and on whichever origin it is sent (the record is keyed on
// x402.PaymentID, and the facilitator is sent exactly the transaction
// identified). The money comes before the work: a purchase is verified,
// its scan reserved without a request to the site, then settled, and only
// then is the site scanned. A settled payment's report is its buyer's: a
// replay needs the receipt returned with it (or the paying request's
// Idempotency-Key), since the transaction is public on chain. The HTTP
// gateway and the MCP deep_scan tool both adapt Gateway.Begin,
// Purchase.Settle and Purchase.Run.
package payment
