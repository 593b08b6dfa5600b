// Package archtest holds the test that keeps the module's package graph
// inside DESIGN.md's dependency rules; it has no code of its own.
package archtest
