// Package edge is the front of the service, written as a plain net/http
// handler over a small Platform interface so that the same code compiles for
// Cloudflare Workers (GOOS=js), for wazero (GOOS=wasip1, hosted by package
// wasm) and natively (tests). It serves badges, the discovery documents and
// the site's own pages, issues and verifies tokens, checks API keys, applies
// daily allowances with rate-limit headers and x402 402s, and routes
// everything else to the origin with a signed caller identity.
//
// It imports neither engine nor origin: their parsers would bloat the
// WebAssembly module, and the edge talks to the origin over HTTP only. The
// sub-packages identity, token, x402, scanreq, mdtext and badge import the
// standard library alone, and the origin imports all but badge to agree
// with the edge: on callers and tiers, tokens, payments, the syntax of a
// scan request, and the markdown of text a scanned site chose. native, wasi
// (with wasi/abi) and workers are the Platforms of the three builds; site
// holds the files of the site's own pages, embedded.
package edge
