// Package wasi is the edge's platform inside a WebAssembly module built for
// GOOS=wasip1 and hosted by package wasm (wazero): it implements
// edge.Platform over the host functions of the module "agentready", whose
// ABI, shared with the host, is package edge/wasi/abi.
package wasi
