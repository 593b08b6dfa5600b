// Package wasi is the edge's platform inside a WebAssembly module built for
// GOOS=wasip1 and hosted by package wasm (wazero). The host provides the
// capabilities as imported functions of the module "agentready"; this file
// documents the ABI both sides follow.
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
// Requests reach the module as raw HTTP/1.1 through the exported in_buf and
// handle functions (cmd/edgewasm). To stream a response from the origin (Server-
// Sent Events), the module answers with the header X-Agentready-Forward: 1;
// the host then proxies the request itself, adding the request headers the
// module named in X-Agentready-Forward-Req-* and the other response headers.
package wasi

// Names shared with the host.
const (
	HostModule       = "agentready"
	ForwardHeader    = "X-Agentready-Forward"
	ForwardReqPrefix = "X-Agentready-Forward-Req-"
	PeerHeader       = "X-Agentready-Peer" // the client address, set by the host
)
