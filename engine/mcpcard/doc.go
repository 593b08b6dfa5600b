// Package mcpcard reads MCP server cards (SEP-2127 `remotes[]` and the older
// `transport.endpoint` shape), grades tool definitions for check 3.7, and builds
// and reads the few JSON-RPC messages the scanner sends to prove an endpoint
// speaks MCP (modern `server/discover`, legacy `initialize`, `tools/list`).
package mcpcard
