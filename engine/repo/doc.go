// Package repo gathers the evidence the ten level-5 (Agent-Native) checks
// judge in a local codebase. Walk reads the tree once — respecting
// .gitignore, skipping tests, fixtures, vendored and generated code, binaries
// and symlinks, with caps on file size, file count and depth — and collects
// structural evidence: Go is read with go/parser (so a word in a comment
// never counts), JavaScript, TypeScript, Python and Ruby through a small
// lexer that blanks comments, OpenAPI and tool-definition files are parsed as
// data, AGENTS.md by its headings. Every piece of evidence names its
// file:line. The Findings are one artifact (key Evidence); the checks in
// package checks judge it and engine.ScanRepo assembles the Result.
package repo
