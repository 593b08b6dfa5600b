// A stateful Streamable HTTP MCP server built with the official MCP
// TypeScript SDK, for the Go tests that check every MCP handshake agentready
// makes ends its session (engine/mcp_sessions_test.go). Each initialize opens
// a session of its own (the SDK's session-per-transport pattern); a DELETE
// with its Mcp-Session-Id ends it.
//
// It serves a small site: a homepage, a server card at
// /.well-known/mcp/server-card naming the endpoint /mcp, the endpoint, and
// /__counts, which answers {"opened", "closed", "open", "toolCalls"}: sessions
// opened and ended with DELETE since start, the ids still open, and tool
// calls (a scan must make none).
//
// Usage: node statefulmcp.mjs; it prints one JSON line, {"url": "<origin>"},
// once it listens on a loopback port, and runs until killed.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const sessions = new Map(); // Mcp-Session-Id → transport
let opened = 0;
let closed = 0;
let toolCalls = 0;

function newServer() {
  const server = new Server({ name: "stateful-test", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{
      name: "echo",
      description: "Returns the text it is given, unchanged, to the caller.",
      inputSchema: { type: "object", properties: { text: { type: "string", description: "The text to return." } }, required: ["text"] },
    }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    toolCalls++;
    return { content: [{ type: "text", text: String(req.params.arguments?.text ?? "") }] };
  });
  return server;
}

function send(res, status, type, body) {
  res.writeHead(status, { "Content-Type": type });
  res.end(body);
}

function rpcError(res, status, code, message) {
  send(res, status, "application/json", JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJSON(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 1 << 20) throw new Error("body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function mcp(req, res) {
  const id = req.headers["mcp-session-id"];
  if (id !== undefined) {
    const transport = sessions.get(id);
    if (!transport) return rpcError(res, 404, -32001, "Session not found");
    const body = req.method === "POST" ? await readJSON(req) : undefined;
    return transport.handleRequest(req, res, body);
  }
  if (req.method !== "POST") return rpcError(res, 400, -32000, "Bad Request: no session");
  let body;
  try {
    body = await readJSON(req);
  } catch {
    return rpcError(res, 400, -32700, "Parse error");
  }
  if (!isInitializeRequest(body)) {
    // server/discover and anything else without a session.
    return rpcError(res, 400, -32000, "Bad Request: no valid session; send initialize first");
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => {
      sessions.set(sid, transport);
      opened++;
    },
    onsessionclosed: (sid) => {
      sessions.delete(sid);
      closed++;
    },
  });
  await newServer().connect(transport);
  return transport.handleRequest(req, res, body);
}

const httpServer = http.createServer(async (req, res) => {
  const origin = `http://${req.headers.host}`;
  const path = new URL(req.url, origin).pathname;
  try {
    switch (path) {
      case "/":
        return send(res, 200, "text/html; charset=utf-8",
          '<!doctype html><html lang="en"><head><title>Stateful MCP</title><link rel="mcp" href="/.well-known/mcp/server-card"></head><body><h1>Stateful MCP</h1></body></html>');
      case "/.well-known/mcp/server-card":
        return send(res, 200, "application/json",
          JSON.stringify({ name: "test/stateful", description: "A stateful MCP server", remotes: [{ type: "streamable-http", url: `${origin}/mcp` }] }));
      case "/__counts":
        return send(res, 200, "application/json", JSON.stringify({ opened, closed, open: [...sessions.keys()], toolCalls }));
      case "/mcp":
        return await mcp(req, res);
      default:
        return send(res, 404, "text/plain", "not found");
    }
  } catch (err) {
    if (!res.headersSent) rpcError(res, 500, -32603, "Internal error");
  }
});

httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address();
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
});
