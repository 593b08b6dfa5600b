// Package wasm hosts the edge's WebAssembly module (GOOS=wasip1 reactor, see
// cmd/edgewasm) with wazero: it compiles the module once (with an on-disk
// compilation cache), keeps a pool of warm instances — one request at a time
// each — and implements the host functions of edge/wasi natively: rate
// limits through internal/ratelimit, the in-memory cache and the origin
// proxy of internal/edgehost. Requests and responses cross the boundary as
// the frames of edge/wasi/abi, the only part of the edge it depends on; it
// imports neither engine nor origin.
package wasm
