// Package origin is the fasthttp server behind the edge: the scan API (JSON
// and Server-Sent Events), idempotent POST, the scan cache and worker pool,
// health and metrics, and the OpenAPI description. It adapts the engine to
// HTTP and never re-implements it. State lives behind package store.
package origin
