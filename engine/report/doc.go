// Package report holds the types a scan produces: the JSON the API returns,
// the CLI prints and the SSE stream and MCP tools carry. Field names follow the
// interface (docs/api.md) and the score summary of docs/check-rules.md.
package report
