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
	}
	b, _ := json.MarshalIndent(card, "", "  ")
	return b
}
