package mcpserver

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Card renders the server card (SEP-2127 fields plus the older SEP-1649
// aliases serverInfo, transport and protocolVersion) for a service at base.
func (s *Server) Card(base string) []byte {
	base = strings.TrimSuffix(base, "/")
	endpoint := base + "/api/mcp"
	type tool struct {
		Name         string `json:"name"`
		Title        string `json:"title,omitempty"`
		Description  string `json:"description"`
		InputSchema  any    `json:"inputSchema"`
		OutputSchema any    `json:"outputSchema,omitempty"`
		Annotations  any    `json:"annotations,omitempty"`
	}
	// Name order, as tools/list answers.
	sorted := append([]*mcp.Tool(nil), s.tools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	tools := make([]tool, len(sorted))
	for i, t := range sorted {
		tools[i] = tool{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations}
	}
	card := map[string]any{
		"$schema":     "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
		"name":        "io.github.agentready/agentready",
		"title":       "agentready — agent-readiness scanner",
		"version":     s.d.Version,
		"description": "Scans websites for AI-agent readiness (48 checks, 4 levels) and says what to fix.",
		"websiteUrl":  base + "/",
		"remotes": []map[string]any{{
			"type": "streamable-http", "url": endpoint, "supportedProtocolVersions": ProtocolVersions,
			"authentication": map[string]any{"required": false, "schemes": []string{"none", "bearer", "apiKey"}},
		}},
		"capabilities":    Capabilities(),
		"tools":           tools,
		"serverInfo":      map[string]any{"name": "agentready", "title": "agentready — agent-readiness scanner", "version": s.d.Version},
		"transport":       map[string]any{"type": "streamable-http", "endpoint": endpoint},
		"protocolVersion": ProtocolVersions[0],
		// Monitors answer over HTTP only: a client reading the card for what
		// this service does would otherwise never learn of them. _meta is the
		// card's extension point; the description stays within the registry's
		// 100 characters.
		"_meta": map[string]any{MonitorsMetaKey: map[string]any{
			"description": MonitorsNote,
			"baseUrl":     base,
			"openapi":     base + "/openapi.json",
			"webhooks":    WebhooksDocs,
			"endpoints":   MonitorEndpoints,
		}},
	}
	b, _ := json.MarshalIndent(card, "", "  ")
	return b
}

// MonitorsMetaKey names the card's _meta entry listing the monitor endpoints.
const MonitorsMetaKey = "io.github.agentready/monitors"

// WebhooksDocs explains monitor deliveries and how to verify them.
const WebhooksDocs = "https://github.com/agentready/agentready/blob/main/docs/webhooks.md"

// MonitorsNote tells agents that monitors are not tools of this server.
const MonitorsNote = "Monitors re-scan a URL on a schedule and POST signed webhooks (scan.completed, score.changed) to a callback URL. " +
	"They are HTTP endpoints, not MCP tools: call them with the same credentials (none, a bearer token from POST /api/agent/token, or X-API-Key); /openapi.json describes them."

// Endpoint is one HTTP operation the card points agents to.
type Endpoint struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Summary string `json:"summary"`
}

// MonitorEndpoints are the monitor operations of /openapi.json, listed in
// the card and named in the server's instructions.
var MonitorEndpoints = []Endpoint{
	{"POST", "/api/monitors", "Create a monitor: {url, callback_url, cadence, events?}; answers 201 with the record and its signing secret, shown only then."},
	{"GET", "/api/monitors", "List the monitors of the caller's token or API key, oldest first (never their secrets)."},
	{"GET", "/api/monitors/{id}", "Read a monitor: status, next run, last score, last delivery (never the secret)."},
	{"DELETE", "/api/monitors/{id}", "Delete a monitor and its pending deliveries."},
	{"POST", "/api/monitors/{id}/test", "Send a signed sample delivery now and answer how the receiver took it."},
	{"GET", "/api/monitors/{id}/deliveries", "List recent deliveries, newest first (?limit=1..100)."},
	{"POST", "/api/monitors/{id}/deliveries/{delivery_id}/redeliver", "Queue a past delivery again with the same webhook-id."},
	{"GET", "/api/monitors/{id}/reports/{report_id}", "The full scan report an event's report_url points to (kept past the last retry of its events)."},
}

// monitorInstructions is the part of the server's instructions that sends
// agents to the monitor endpoints, from the same list as the card.
func monitorInstructions() string {
	ops := make([]string, len(MonitorEndpoints))
	for i, e := range MonitorEndpoints {
		ops[i] = e.Method + " " + e.Path
	}
	return "Monitors (scheduled re-scans that POST signed webhooks to a callback URL when a scan completes or a score changes) are HTTP endpoints, not tools of this server: " +
		strings.Join(ops, ", ") + "; /openapi.json describes them and " + WebhooksDocs + " how to verify deliveries."
}
