package main

import (
	"fmt"
	"io"

	"github.com/agentready/agentready/origin/mcpserver"
)

// toolsCmd prints the MCP tool definitions, or the same tools for another
// agent ecosystem, generated from one source.
func toolsCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("tools", "tools", stderr)
	format := fs.String("format", "mcp", "mcp, openai or anthropic")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	s, err := mcpserver.New(mcpserver.Deps{})
	if err != nil {
		fmt.Fprintln(stderr, "agentready tools:", err)
		return 1
	}
	b, err := s.Export(*format)
	if err != nil {
		fmt.Fprintln(stderr, "agentready tools:", err)
		return exitUsage
	}
	stdout.Write(b)
	return exitOK
}
