// Package monitor runs scheduled re-scans and delivers their signed webhooks.
//
// A Service validates and creates monitors (the HTTP and MCP transports only
// adapt it), claims due runs from the store and scans them with a bounded
// share of the scanner, writes each run's new state, report and events in
// one atomic store write (the outbox), and sends due deliveries through the
// scanner's SSRF guard, retrying on a schedule until the receiver answers
// 2xx. Every piece of work is claimed under a lease in the shared store, so
// any number of origins can run a Service on one Redis: a run or a delivery
// is done by one of them, and a dead origin's claims pass to another when
// their lease ends.
package monitor
