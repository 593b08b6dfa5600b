// Package workers is the edge's platform on Cloudflare Workers (GOOS=js, with
// github.com/syumai/workers): origin calls and streaming through fetch to
// ORIGIN_URL, the Cache API, and daily allowances in Redis over a Workers TCP
// socket (REDIS_URL) running redis_rate's own GCRA script, so Workers and
// origins share one count. Every request runs in a fresh Go instance, so
// nothing is kept in memory between requests. shim.mjs, the Worker's entry
// module, answers cached public GETs before Go starts.
package workers
