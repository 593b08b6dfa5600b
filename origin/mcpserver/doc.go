// Package mcpserver is the MCP server at /api/mcp: eleven tools over the
// engine, served by the official Go SDK over Streamable HTTP (stateless, JSON
// responses), for the 2026-07-28 protocol and the legacy initialize-based
// versions alike. The server card at /.well-known/mcp.json is generated from
// the same tool definitions, so the two cannot disagree.
package mcpserver
