package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/mcpcard"
)

// Checks of the MCP family (engine/gather/mcp.go): the MCP server card and
// its handshake (1.12) and the quality of the tools it lists (3.7).

func mcpServer(in gather.Source) Outcome {
	doc := gather.Get(in, gather.MCPCard)
	r := doc.Resp
	if !r.Found() {
		return fail("No MCP server card at /.well-known/mcp/server-card, /.well-known/mcp/server-card.json or /.well-known/mcp.json.", "", map[string]any{"tried": gather.MCPPaths})
	}
	if doc.Err != nil {
		return partial("The MCP server card is not valid JSON: "+shortErr(doc.Err)+".", "Serve the card as a JSON object.", nil, at(r))
	}
	c, p := doc.Card, doc.Probe
	det := map[string]any{"card": c, "probe": p}
	if !c.Valid() {
		return partial("The MCP server card is incomplete: "+strings.Join(c.Findings, "; ")+".", "", det, at(r))
	}
	if p.Endpoint == "" {
		return partial("The server card names an endpoint on another site ("+c.Endpoints[0]+"), which the scanner does not contact.", "Name an endpoint on your own site in `remotes[].url`.", det, at(r))
	}
	if !p.Modern && !p.Legacy {
		return partial("The server card names "+p.Endpoint+", but it did not answer an MCP handshake: "+p.Error+".", "Make the endpoint answer `server/discover` (MCP 2026-07-28) and `initialize` (earlier versions) over Streamable HTTP.", det, at(r))
	}
	era := map[[2]bool]string{{true, true}: "both the 2026-07-28 and legacy handshakes", {true, false}: "the 2026-07-28 handshake", {false, true}: "the legacy initialize handshake"}[[2]bool{p.Modern, p.Legacy}]
	return pass(fmt.Sprintf("MCP server %q at %s answers %s.", c.Name, p.Endpoint, era), det, at(r))
}

func mcpToolQuality(in gather.Source) Outcome {
	doc := gather.Get(in, gather.MCPCard)
	if doc.Card == nil {
		return na("No MCP server card was found.")
	}
	p := doc.Probe
	tools, source := p.Tools, p.ToolsSource
	if len(tools) == 0 && len(doc.Card.Tools) > 0 {
		tools, source = doc.Card.Tools, "card"
	}
	if len(tools) == 0 {
		if p.Modern || p.Legacy {
			return fail("The MCP server answers but lists no tools.", "", nil)
		}
		return na("The server card lists no tools and its endpoint could not be asked.")
	}
	good := 0
	problems := map[string][]string{}
	for _, t := range tools {
		if ok, why := mcpcard.Grade(t); ok {
			good++
		} else if len(problems) < 20 {
			problems[t.Name] = why
		}
	}
	ratio := float64(good) / float64(len(tools))
	det := map[string]any{"tools": len(tools), "wellDescribed": good, "source": source, "problems": problems}
	msg := fmt.Sprintf("%d of %d MCP tools (from the %s) are well described", good, len(tools), source)
	switch {
	case ratio >= 0.8:
		return pass(msg+".", det, p.Endpoint)
	case ratio >= 0.4:
		return partial(msg+".", "", det, p.Endpoint)
	}
	return fail(msg+".", "", det)
}
