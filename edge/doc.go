// Package edge is the front of the service. Its sub-packages that the origin
// may import hold what both sides must agree on, and depend on nothing but the
// standard library: identity (tiers and callers) and x402 (payment requirements).
package edge
