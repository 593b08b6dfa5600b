// Package wasm hosts the edge's WebAssembly module (GOOS=wasip1 reactor, see
// cmd/edgewasm) with wazero: it compiles the module once (with an on-disk
// compilation cache), keeps a pool of warm instances — one request at a time
// each — and implements the host functions of package edge/wasi natively:
// rate limits through internal/ratelimit, an in-memory cache, and calls to
// the origin. It imports neither engine nor origin.
package wasm
