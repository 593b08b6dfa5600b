// Package monitorkill proves, against real `agentready serve` processes
// killed with SIGKILL, the durability promises monitors make
// (docs/webhooks.md, "Durability and several origins"):
//
//   - Three origins on one Redis, and on a Redis Cluster of three masters,
//     200 monitors on a 5 s cadence, the origin scanning the most sites
//     killed: every due run of every monitor is
//     scanned and reported (its scheduled_for slots follow the cadence from
//     the one due at creation, none missed; slots are coalesced only after
//     a run more than a whole cadence late, as designed); each run has
//     exactly one event id, answered 2xx at least once, with repeats only as
//     re-sends of that id; a run is scanned twice only when it was in flight
//     at the kill (the crash window), and then scanned again only after its
//     lease, by a survivor.
//   - One process on the embedded file: a monitor answered 201 and killed at
//     once is there after a restart; every delivery pending when the process
//     is killed (the receiver was failing) is delivered after a restart,
//     those it was sending at the kill at once rather than when their claim
//     would have run out; no run is missed across a restart shorter than a
//     cadence.
//
// Every delivery's signatures (both schemes) are checked with
// webhook.Verify against the secret its monitor's creation returned.
//
// How runs are counted: a monitor's fixture site is a listener of its own
// (a scan targets a site's root, so the port is what tells monitors apart),
// and the scanner's homepage request, made once per scan, is one scan. Runs
// of a monitor follow one another (the next is scheduled when one is
// recorded), so a scan belongs to the first run whose event was made after
// it began. When an origin logs failed store calls (Redis not answering in
// time, as on a starved machine), work then is handed back or redone by
// design; runs around those seconds are counted in a window of their own
// and reported, never silently. TestCheckerCatches shows, on made-up
// histories, that the counting catches each fault it looks for.
//
// The package holds only tests: it builds the agentready binary once per
// test run and drives it as a user would, with fixture sites and a webhook
// receiver on loopback in the test process. The Redis test needs REDIS_URL
// (it takes database 11 and empties it), the Cluster test REDIS_CLUSTER_URL
// (it deletes the keys under the store's prefix, agentready:, on every
// node), and both Linux (they read /proc to tell which origin holds a scan).
package monitorkill
