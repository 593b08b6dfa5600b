// Package workerd runs the Workers build of the edge (build/worker, made by
// make worker) in workerd, the runtime Cloudflare Workers run, with the
// whole service behind it: the behavioural table (internal/testing/edgetest),
// interleaved requests, the Cache API entry module, a Redis Cluster over
// cloudflare:sockets, the settings, the free plan's size, and wrangler's
// dry run. Apart from edge/workers, whose own tests need no service.
package workerd
