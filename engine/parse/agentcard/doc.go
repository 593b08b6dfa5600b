// Package agentcard validates A2A Agent Cards against the v1.0 and v0.3 shapes.
// The same validator serves check 1.2 and the MCP tool validate_agent_card.
package agentcard
