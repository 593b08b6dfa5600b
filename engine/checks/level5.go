package checks

// The level-5 checks run over a local repository in the command-line tool;
// their definitions live here so every catalog (docs, MCP) lists all 58.
func init() {
	for _, d := range []Definition{
		{ID: "5.1", Name: "Intent-Based Endpoints", LooksFor: "Route registrations (Go net/http, chi, gin, echo, fasthttp; Express, Fastify, Hono; FastAPI, Flask, Django; Rails; OpenAPI files) whose last path segment is an action verb.",
			Rule: "pass: at least 2 intent routes beside the CRUD routes. partial: 1. fail: 0.", Fix: "Add routes named for what agents want to do, e.g. `POST /invoices/{id}/send`."},
		{ID: "5.2", Name: "Agent Sessions", LooksFor: "Session id headers read by handlers (Mcp-Session-Id, X-Agent-Session, conversation/thread ids) or a session store with expiry keyed by client identity.",
			Rule: "pass: such a mechanism. fail: none.", Fix: "Let agents carry context across calls with a session id header your handlers read."},
		{ID: "5.3", Name: "Scoped Agent Tokens", LooksFor: "Token issuance with scopes (OAuth token endpoint, JWT scope claims, scoped API-key model) and scope enforcement on routes.",
			Rule: "pass: both. partial: one. fail: neither.", Fix: "Issue tokens with scopes and check the scope on each route."},
		{ID: "5.4", Name: "Agent Audit Logs", LooksFor: "Structured logs or audit records carrying the acting client or agent identity with the action.",
			Rule: "pass: such records. fail: none.", Fix: "Log every state-changing call with the acting client/agent id and the action."},
		{ID: "5.5", Name: "Sandbox Environment", LooksFor: "Sandbox base URLs or test modes read by code: config files or settings selecting a sandbox, test-key prefixes, dry-run flags.",
			Rule: "pass: sandbox configuration that code reads. partial: sandbox configuration nothing reads. fail: none. Prose is never evidence.", Fix: "Offer a sandbox or dry-run mode agents can practise against, selected by configuration."},
		{ID: "5.6", Name: "Consequence Labels", LooksFor: "OpenAPI x-consequence / x-irreversible, MCP tool annotations (destructiveHint, readOnlyHint), confirmation-required flags.",
			Rule: "pass: destructive actions are labelled. fail: none.", Fix: "Label destructive operations (`x-irreversible: true`, MCP `destructiveHint`)."},
		{ID: "5.7", Name: "Native Tool Schemas", LooksFor: "Tool definition files (MCP tools, OpenAI function or Anthropic tool JSON: name, description, JSON-schema input), validated.",
			Rule: "pass: valid definitions. partial: definition files that do not validate. fail: none.", Fix: "Ship tool definitions (name, description, JSON Schema input) for your main actions."},
		{ID: "5.8", Name: "Multi-Framework Tool Definitions", LooksFor: "Tool definitions for several agent ecosystems (MCP plus OpenAI/Anthropic/LangChain/Gemini), or one source that generates them.",
			Rule: "pass: 2 or more ecosystems. partial: 1. fail: 0.", Fix: "Generate tool definitions for several ecosystems from one source."},
		{ID: "5.9", Name: "Agent Instructions File", LooksFor: "AGENTS.md at the repository root, and vendor-specific files (CLAUDE.md, .github/copilot-instructions.md, .cursor/rules).",
			Rule: "pass: AGENTS.md covering at least two of build, test and conventions. partial: only a vendor-specific file, or a thin AGENTS.md. fail: none.", Fix: "Add AGENTS.md with how to build, how to test, and the project's conventions."},
		{ID: "5.10", Name: "Signed Event Delivery", LooksFor: "Outbound webhooks or callbacks signed with a secret (HMAC signature header with a timestamp, Standard Webhooks).",
			Rule: "pass: signature and timestamp. partial: webhooks sent unsigned, or signed without a timestamp. fail: no outbound event delivery.", Fix: "Sign webhook deliveries with HMAC-SHA256 over timestamp and body, and send the timestamp."},
	} {
		d.Level = 5
		register(d, nil)
	}
}
