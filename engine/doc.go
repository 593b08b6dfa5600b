// Package engine scans a website for agent readiness: it gathers artifacts
// (package gather, over the SSRF-safe fetcher of package fetch), runs the 48 web
// checks (package checks), scores them (package score) and returns a report
// (package report). ScanRepo does the same for a codebase: the walk of package
// repo is its gatherer, the 10 level-5 checks judge it. It has no server code;
// the CLI, the HTTP API, the SSE stream and the MCP server all drive it
// through Scanner.Scan and ScanRepo.
//
// The folders follow the pipeline: fetch → gather → checks → score →
// report (advice plans from a report); engine/parse holds one package per
// document format the gatherers read (robots.txt, llms.txt, HTML, JSON-LD,
// OpenAPI, linksets, agent and MCP cards, well-known files, commerce and
// Web Bot Auth documents, XML feeds and sitemaps), each with its fuzz
// target; engine/internal holds helpers no one outside the engine needs;
// weburl and clip are the URL and text-cutting rules every side shares.
package engine
