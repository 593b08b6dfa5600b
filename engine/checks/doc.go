// Package checks defines the 58 checks of docs/check-rules.md and judges them. A Check
// is a value, in the manner of go/analysis: an id, a name, a level, what it
// looks for, how to fix it, the artifacts it requires, and a pure function
// from those artifacts to an outcome. The 48 web checks read what the web
// plan of package gather produced; the 10 level-5 checks read the findings
// of a repository walk (package repo). Nothing here touches the network.
//
// Files follow the pipeline: each levelN.go is the catalog of its level
// (the register calls, in order, and the starter snippets); a check's
// function lives in the file of its family, named like the file of the
// gatherer it judges in engine/gather (robots.go, discovery.go, openapi.go,
// mcp.go, feed.go, auth.go, payments.go, page.go), as the deep_*.go files
// pair. Checks without a family of their own (the API design graded from
// the OpenAPI model, the search-engine checks of the homepage, level 5)
// stay in their level file.
//
// Adding a check: if no artifact holds what it needs yet, its gatherer (a
// Key in engine/gather/web.go, a Define in engine/gather/<family>.go,
// listed in WebPlan); the check (its register call in the level's catalog,
// its function in engine/checks/<family>.go); a verdict for its id in every
// testdata/sites/*/_expect.json; and one harness call in a test,
// checktest.Site(t, "testdata/sites/<name>") from
// internal/testing/checktest, which scans the fixture site and fails for
// every verdict that differs from its _expect.json.
package checks
