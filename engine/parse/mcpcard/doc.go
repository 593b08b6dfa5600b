// Package mcpcard reads MCP server cards (SEP-2127 `remotes[]` and the older
// `transport.endpoint` shape), grades tool definitions for check 3.7, and builds
// and reads the few JSON-RPC messages the scanner sends to prove an endpoint
// speaks MCP (modern `server/discover`, legacy `initialize`, `tools/list`, and
// the `DELETE` that ends a legacy session). Its ReadReply is the one reader of
// JSON-RPC 2.0 replies, over JSON or an event stream, for MCP and A2A alike.
package mcpcard
