// Package checks defines the 58 checks of CHECKS.md and judges the 48 web
// checks. A Check is a value, in the manner of go/analysis: an id, a name, a
// level, what it looks for, how to fix it, and a pure function from gathered
// artifacts to an outcome. Nothing here touches the network.
package checks
