package mcpserver

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Export renders the tool definitions for another agent ecosystem, from the
// same definitions the MCP server serves: "mcp" (tools/list entries), "openai"
// (Chat Completions function tools) or "anthropic" (Messages API tools).
func (s *Server) Export(format string) ([]byte, error) {
	tools := append(s.tools[:0:0], s.tools...)
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	var out []map[string]any
	for _, t := range tools {
		switch format {
		case "mcp":
			out = append(out, map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "annotations": t.Annotations})
		case "openai":
			out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": t.InputSchema}})
		case "anthropic":
			out = append(out, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.InputSchema})
		default:
			return nil, fmt.Errorf("unknown format %q: use mcp, openai or anthropic", format)
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
