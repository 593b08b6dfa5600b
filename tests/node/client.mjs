// Connects the official MCP TypeScript SDK client to an agentready MCP
// endpoint, lists the tools, calls scan_url and prints a JSON summary.
// Usage: node client.mjs <endpoint> <site-url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [endpoint, site] = process.argv.slice(2);
if (!endpoint || !site) {
  console.error("usage: node client.mjs <endpoint> <site-url>");
  process.exit(2);
}
const client = new Client({ name: "agentready-ts-interop", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(endpoint));
await client.connect(transport);
const { tools } = await client.listTools();
const res = await client.callTool({ name: "scan_url", arguments: { url: site } });
if (res.isError) {
  console.error("scan_url failed:", JSON.stringify(res.content));
  process.exit(1);
}
const sc = res.structuredContent;
console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion ?? "",
  tools: tools.map((t) => t.name),
  score: sc.score.value,
  checks: sc.checks.length,
}));
await client.close();
