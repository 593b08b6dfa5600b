// Package archtest holds the test that keeps the module's package graph
// inside docs/design.md's dependency rules (and keeps test rigs out of what the binaries link); it has no code of its own.
package archtest
