// Package gather turns a site into typed artifacts (robots groups, the parsed
// homepage, JSON-LD graph, OpenAPI model, linkset, server card…). Each
// artifact has a Key and one Gatherer (Define), which names the artifacts it
// needs in Requires; checks read artifacts with Get and never touch the
// network or parse a document themselves.
//
// Plan.Run is the driver: a gatherer starts as soon as its requirements are
// produced, so independent work runs concurrently, and the fetch session
// answers a URL asked for twice from one request. A request's round is one
// more than the deepest round behind the artifacts its gatherer requires (or
// than an earlier response of the same gatherer, with After), so the rounds
// of requests follow the graph instead of a hand-written sequence.
package gather
