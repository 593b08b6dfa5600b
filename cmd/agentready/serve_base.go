package main

import (
	"strings"

	"github.com/agentready/agentready/internal/stack"
)

// baseURLWarning is what serve says at start when the public listener may be
// reached from other machines and AGENTREADY_BASE_URL is unset ("" when
// neither): the discovery documents, the MCP server card and the pages then
// name the service by each request's Host header. It warns rather than
// refuses, so that `make run ADDR=0.0.0.0:8080` and a local compose keep
// working; the edge answers those documents private with Vary: Host, so no
// shared cache hands one Host's document to a request for another. An
// origin (role origin) is not the public listener: its edges forward the
// Host they were asked for.
func baseURLWarning(role stack.Role, addr string, env func(string) string) string {
	if role == stack.RoleOrigin || strings.TrimSpace(env("AGENTREADY_BASE_URL")) != "" || !listensBeyondLoopback(addr) {
		return ""
	}
	return "AGENTREADY_BASE_URL is unset and serve listens beyond loopback: the discovery documents (/.well-known/*, /llms.txt), the MCP server card and the pages name the service by each request's Host header, and are answered private (Vary: Host) so that no shared cache keeps them. Set it to the public URL, such as https://agentready.example.com (docs/deploy.md, \"What production needs\")"
}
