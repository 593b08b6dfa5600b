// Package engine scans a website for agent readiness: it gathers artifacts
// (package gather, over the SSRF-safe fetcher of package fetch), runs the 48 web
// checks (package checks), scores them (package score) and returns a report
// (package report). It has no server code; the CLI, the HTTP API, the SSE
// stream and the MCP server all drive it through Scanner.Scan.
package engine
