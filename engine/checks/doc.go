// Package checks defines the 58 checks of docs/check-rules.md and judges them. A Check
// is a value, in the manner of go/analysis: an id, a name, a level, what it
// looks for, how to fix it, the artifacts it requires, and a pure function
// from those artifacts to an outcome. The 48 web checks read what the web
// plan of package gather produced; the 10 level-5 checks read the findings
// of a repository walk (package repo). Nothing here touches the network.
package checks
