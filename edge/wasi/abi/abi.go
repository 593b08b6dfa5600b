// Package abi is what the wazero host (package wasm) and the edge's wasip1
// adapter (package edge/wasi, inside the module) agree on, and all they
// share: the host functions' names and layouts, and the frames requests and
// responses cross in (frame.go). It depends on the standard library only.
//
// Host functions, imported by the module from the module "agentready":
//
//	rate_allow(keyPtr, keyLen, limit, periodSeconds, n, outPtr) → 0 ok | 1 error
//	    writes four little-endian uint64 at outPtr: allowed (0/1), remaining,
//	    retryAfter ms (as int64), resetAfter ms
//	cache_get(keyPtr, keyLen) → value length, or 0xFFFFFFFF when absent
//	cache_read(ptr, len)        copies the value of the last cache_get
//	cache_put(keyPtr, keyLen, valPtr, valLen, ttlSeconds)
//	origin_fetch(reqPtr, reqLen) → response length (an HTTP/1.1 response), 0 on failure
//	origin_read(ptr, len)       copies the response of the last origin_fetch
//
// Exports of the module (cmd/edgewasm): in_buf(size) → pointer to a buffer
// for the request frame; handle(size) → pointer (high 32 bits) and length
// (low 32 bits) of the response frame. To stream a response from the origin
// (Server-Sent Events), the module answers with a forward frame; the host
// then proxies the request itself, adding the request and response headers
// the frame names.
package abi

// Names shared by host and module.
const (
	HostModule = "agentready"
	PeerHeader = "X-Agentready-Peer" // the client address, set by the host
	// PathHeader, in a forward frame's headers, is the path the module
	// routed and signed (the canonical one): the host forwards its copy of
	// the request under it, since the origin takes only that spelling. The
	// host never forwards the header itself, nor a client's.
	PathHeader = "X-Agentready-Forward-Path"
)
