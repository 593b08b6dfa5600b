// Package fetch is the scanner's only way onto the network.
//
// A Fetcher belongs to one scan. It refuses non-public addresses at dial time
// (after DNS resolution, so DNS rebinding cannot slip through) and again on every
// redirect hop, caps bodies after decompression (gzip bombs stay bounded),
// limits redirects, per-request time and per-host concurrency, and fetches each
// distinct request at most once: concurrent callers asking for the same request
// share one round trip. It records every request it made so tests and benchmarks
// can count them.
//
// Its AddressPolicy is the one guard for everything that reaches out on a
// user's behalf (scans, the browser's proxy, webhook deliveries, the payment
// facilitator): public addresses on ports 80 and 443, widened by
// AllowPrivate, AllowAnyPort or an allow-list of exact addresses (tests and
// local runs), and worded, when Opaque, so that a refusal never tells how
// the service's resolver sees internal names.
package fetch
