// Package workers is the edge's platform on Cloudflare Workers (GOOS=js):
// origin calls and streaming through fetch to ORIGIN_URL, the Cache API, and
// daily allowances in Redis over a Workers TCP socket (REDIS_URL) running
// redis_rate's own GCRA script, so Workers and origins share one count. On a
// Redis Cluster (REDIS_URL with several seed nodes, as the origin reads it)
// the script goes to the node that holds its key's slot, following MOVED
// and ASK (decide).
//
// index.mjs, the Worker's entry module, starts one Go program per isolate on
// the isolate's first request and dispatches every request into it (Serve);
// it answers cached public GETs before Go is called. The settings are read
// once, at that start (ReadSettings). The I/O is done by the entry module's
// host functions, each started by the goroutine of the request it belongs to
// and reported back to that request only: nothing with I/O — a socket, a
// stream, a cache write — is shared between requests, which Workers forbid.
package workers
