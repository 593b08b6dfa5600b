// Package report holds the types a scan produces: the JSON the API returns,
// the CLI prints and the SSE stream and MCP tools carry. Field names follow the
// interface spec (service-spec.md §2) and the score summary of CHECKS.md.
package report
