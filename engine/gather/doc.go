// Package gather turns a site into artifacts: it runs every fetch the checks
// need, each at most once, as concurrently as their dependencies allow, and
// parses the answers into typed values (robots groups, the parsed homepage,
// JSON-LD graph, OpenAPI model, linkset, server card…). Checks then judge the
// artifacts without touching the network.
//
// A request that needs nothing runs in round 1; a request that needs the answer
// of a round-n request runs in round n+1. The plan never goes deeper than 4.
package gather
