package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/repo"
)

// The level-5 checks judge a repository, not a site: their one input is the
// Findings of a repository walk (repo.Evidence). engine.ScanRepo judges them
// with the same Judge as the web checks, so results are built one way.
func init() {
	for _, c := range []struct {
		Definition
		run func(gather.Source) Outcome
	}{
		{Definition{ID: "5.1", Name: "Intent-Based Endpoints", Effort: Large, LooksFor: "Route registrations (Go net/http, chi, gin, echo, fasthttp; Express, Fastify, Hono; FastAPI, Flask, Django; Rails; OpenAPI files) whose last path segment is an action verb.",
			Rule: "pass: at least 2 intent routes beside the CRUD routes. partial: 1. fail: 0.", Fix: "Add routes named for what agents want to do, e.g. `POST /invoices/{id}/send`."}, intentEndpoints},
		{Definition{ID: "5.2", Name: "Agent Sessions", Effort: Large, LooksFor: "Session id headers read by handlers (Mcp-Session-Id, X-Agent-Session, conversation/thread ids) or a session store with expiry keyed by client identity.",
			Rule: "pass: such a mechanism. fail: none.", Fix: "Let agents carry context across calls with a session id header your handlers read."}, agentSessions},
		{Definition{ID: "5.3", Name: "Scoped Agent Tokens", Effort: Large, LooksFor: "Token issuance with scopes (OAuth token endpoint, JWT scope claims, scoped API-key model) and scope enforcement on routes.",
			Rule: "pass: both. partial: one. fail: neither.", Fix: "Issue tokens with scopes and check the scope on each route."}, scopedTokens},
		{Definition{ID: "5.4", Name: "Agent Audit Logs", Effort: Large, LooksFor: "Structured logs or audit records carrying the acting client or agent identity with the action.",
			Rule: "pass: such records. fail: none.", Fix: "Log every state-changing call with the acting client/agent id and the action."}, auditLogs},
		{Definition{ID: "5.5", Name: "Sandbox Environment", Effort: Large, LooksFor: "Sandbox base URLs or test modes read by code: config files or settings selecting a sandbox, test-key prefixes, dry-run flags.",
			Rule: "pass: sandbox configuration that code reads. partial: sandbox configuration nothing reads. fail: none. Prose is never evidence.", Fix: "Offer a sandbox or dry-run mode agents can practise against, selected by configuration."}, sandbox},
		{Definition{ID: "5.6", Name: "Consequence Labels", Effort: Medium, LooksFor: "OpenAPI x-consequence / x-irreversible, MCP tool annotations (destructiveHint, readOnlyHint), confirmation-required flags.",
			Rule: "pass: destructive actions are labelled. fail: none.", Fix: "Label destructive operations (`x-irreversible: true`, MCP `destructiveHint`)."}, consequenceLabels},
		{Definition{ID: "5.7", Name: "Native Tool Schemas", Effort: Medium, LooksFor: "Tool definition files (MCP tools, OpenAI function or Anthropic tool JSON: name, description, JSON-schema input), validated.",
			Rule: "pass: valid definitions. partial: definition files that do not validate. fail: none.", Fix: "Ship tool definitions (name, description, JSON Schema input) for your main actions."}, toolSchemas},
		{Definition{ID: "5.8", Name: "Multi-Framework Tool Definitions", Effort: Medium, LooksFor: "Tool definitions for several agent ecosystems (MCP plus OpenAI/Anthropic/LangChain/Gemini), or one source that generates them.",
			Rule: "pass: 2 or more ecosystems. partial: 1. fail: 0.", Fix: "Generate tool definitions for several ecosystems from one source."}, multiFramework},
		{Definition{ID: "5.9", Name: "Agent Instructions File", Effort: Small, Snippet: starterAgentsMd, LooksFor: "AGENTS.md at the repository root, and vendor-specific files (CLAUDE.md, .github/copilot-instructions.md, .cursor/rules).",
			Rule: "pass: AGENTS.md covering at least two of build, test and conventions. partial: only a vendor-specific file, or a thin AGENTS.md. fail: none.", Fix: "Add AGENTS.md with how to build, how to test, and the project's conventions."}, agentInstructions},
		{Definition{ID: "5.10", Name: "Signed Event Delivery", Effort: Large, LooksFor: "Outbound webhooks or callbacks signed with a secret (HMAC signature header with a timestamp, Standard Webhooks).",
			Rule: "pass: signature and timestamp. partial: webhooks sent unsigned, or signed without a timestamp. fail: no outbound event delivery.", Fix: "Sign webhook deliveries with HMAC-SHA256 over timestamp and body, and send the timestamp."}, signedEvents},
	} {
		c.Level = 5
		register(c.Definition, needs(repo.Evidence), c.run)
	}
}

// starterAgentsMd is an AGENTS.md skeleton with the three topics 5.9 counts.
const starterAgentsMd = "# AGENTS.md\n\n## Build\n\n- `make build`: what it builds and where.\n\n" +
	"## Test\n\n- `make test`: what must pass before a change is done.\n\n" +
	"## Conventions\n\n- Where code goes, how errors are handled, what never to do.\n"

func atOf(h []repo.Hit) string {
	if len(h) == 0 {
		return ""
	}
	return h[0].At()
}

// places is the details entry for evidence: its first ten file:line sites.
func places(h []repo.Hit) []string {
	var out []string
	for i, x := range h {
		if i == 10 {
			break
		}
		out = append(out, x.At()+" "+x.What)
	}
	return out
}

func intentEndpoints(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	var intents []repo.Hit
	seen := map[string]bool{}
	for _, r := range e.Routes {
		if v := ActionVerb(r.Path); v != "" && !seen[r.Method+" "+r.Path] {
			seen[r.Method+" "+r.Path] = true
			intents = append(intents, repo.Hit{File: r.File, Line: r.Line, What: strings.TrimSpace(r.Method + " " + r.Path)})
		}
	}
	det := map[string]any{"routes": len(e.Routes), "intent": places(intents)}
	switch n := len(intents); {
	case n >= 2:
		return pass(fmt.Sprintf("%d intent-shaped routes beside the CRUD ones, e.g. %s.", n, intents[0].What), det, intents[0].At())
	case n == 1:
		return partial("One intent-shaped route ("+intents[0].What+"); the rest are CRUD.", "", det, intents[0].At())
	}
	return fail(fmt.Sprintf("None of the %d registered routes is named for an action (send, cancel, refund, scan…).", len(e.Routes)), "", det)
}

func agentSessions(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	if len(e.SessionHeaders) > 0 {
		return pass("Handlers read an agent session header ("+e.SessionHeaders[0].What+").", places(e.SessionHeaders), atOf(e.SessionHeaders))
	}
	return fail("No handler reads a session header agents can attach to (Mcp-Session-Id, X-Agent-Session, conversation or thread ids).", "", nil)
}

func scopedTokens(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	det := map[string]any{"issuance": places(e.ScopeIssue), "enforcement": places(e.ScopeEnforce)}
	switch {
	case len(e.ScopeIssue) > 0 && len(e.ScopeEnforce) > 0:
		return pass("Tokens are issued with scopes and routes check them.", det, atOf(e.ScopeIssue))
	case len(e.ScopeIssue) > 0:
		return partial("Tokens carry scopes, but no route checks a scope.", "Check the required scope on each route (a requireScope middleware).", det, atOf(e.ScopeIssue))
	case len(e.ScopeEnforce) > 0:
		return partial("Routes check scopes, but no token issuance with scopes was found.", "Issue tokens with a scope claim (OAuth token response or JWT scope).", det, atOf(e.ScopeEnforce))
	}
	return fail("Neither scoped token issuance nor scope enforcement was found.", "", nil)
}

func auditLogs(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	if len(e.AuditLogs) > 0 {
		return pass("Structured logs record the acting client or agent ("+e.AuditLogs[0].What+").", places(e.AuditLogs), atOf(e.AuditLogs))
	}
	return fail("No structured log or audit record carries the acting agent or client identity with the action.", "", nil)
}

func sandbox(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	det := map[string]any{"reads": places(e.SandboxReads), "configuration": places(e.SandboxConfigs)}
	switch {
	case len(e.SandboxReads) > 0:
		return pass("Code reads a sandbox or test-mode setting ("+e.SandboxReads[0].What+").", det, atOf(e.SandboxReads))
	case len(e.SandboxConfigs) > 0:
		return partial("Sandbox configuration exists, but no code reads it.", "Read the sandbox setting in code (base URL or test mode) so agents can really use it.", det, atOf(e.SandboxConfigs))
	}
	return fail("No sandbox, test mode or dry-run setting that code reads.", "", nil)
}

func consequenceLabels(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	if len(e.Consequence) > 0 {
		return pass("Actions carry consequence labels ("+e.Consequence[0].What+").", places(e.Consequence), atOf(e.Consequence))
	}
	return fail("No destructive or irreversible action is labelled (x-consequence, destructiveHint, confirmation flags).", "", nil)
}

func toolSchemas(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	var valid, invalid []repo.Hit
	for _, t := range e.Tools {
		h := repo.Hit{File: t.File, Line: t.Line, What: t.Ecosystem + " " + t.Name}
		if t.Problem == "" {
			valid = append(valid, h)
		} else {
			h.What += ": " + t.Problem
			invalid = append(invalid, h)
		}
	}
	det := map[string]any{"valid": places(valid), "invalid": places(invalid)}
	switch {
	case len(valid) > 0:
		return pass(fmt.Sprintf("%d valid tool definitions (name, description, input schema).", len(valid)), det, atOf(valid))
	case len(invalid) > 0:
		return partial(fmt.Sprintf("%d tool definitions, none valid: %s.", len(invalid), invalid[0].What), "", det, atOf(invalid))
	}
	return fail("No tool definitions (MCP tools, OpenAI functions, Anthropic tools).", "", nil)
}

func multiFramework(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	eco := map[string]repo.Hit{}
	for _, t := range e.Tools {
		if _, ok := eco[t.Ecosystem]; !ok && t.Problem == "" {
			eco[t.Ecosystem] = repo.Hit{File: t.File, Line: t.Line, What: t.Ecosystem}
		}
	}
	names := make([]string, 0, len(eco))
	for k := range eco {
		names = append(names, k)
	}
	sort.Strings(names)
	det := map[string]any{"ecosystems": names}
	switch len(names) {
	case 0:
		return fail("No valid tool definitions for any agent ecosystem.", "", nil)
	case 1:
		return partial("Tool definitions for one ecosystem only ("+names[0]+").", "Generate definitions for a second ecosystem (OpenAI functions, Anthropic tools) from the same source.", det, eco[names[0]].At())
	}
	return pass("Tool definitions for "+strings.Join(names, ", ")+".", det, eco[names[0]].At())
}

func agentInstructions(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	if d := e.AgentsMD; d != nil {
		var covered []string
		for _, k := range []string{"build", "test", "conventions"} {
			if _, ok := d.Sections[k]; ok {
				covered = append(covered, k)
			}
		}
		det := map[string]any{"covers": covered, "bytes": d.Bytes}
		if len(covered) >= 2 && d.Bytes >= 200 {
			return pass("AGENTS.md covers "+strings.Join(covered, ", ")+".", det, d.File+":1")
		}
		return partial("AGENTS.md is thin: it covers "+fmt.Sprint(len(covered))+" of build, test and conventions.", "Say how to build, how to test and which conventions hold.", det, d.File+":1")
	}
	if len(e.VendorFiles) > 0 {
		return partial("Only vendor-specific agent instructions ("+e.VendorFiles[0].File+"), no AGENTS.md.", "Move the instructions to AGENTS.md, which every agent reads.", places(e.VendorFiles), atOf(e.VendorFiles))
	}
	return fail("No AGENTS.md (or any agent instructions file).", "", nil)
}

func signedEvents(in gather.Source) Outcome {
	e := gather.Get(in, repo.Evidence)
	det := map[string]any{"signed": places(e.Signed), "timestamp": places(e.Timestamped), "unsigned": places(e.Unsigned)}
	switch {
	case len(e.Signed) > 0 && len(e.Timestamped) > 0:
		return pass("Outbound events are signed with an HMAC signature header and a timestamp.", det, atOf(e.Signed))
	case len(e.Signed) > 0:
		return partial("Outbound events are signed, but without a timestamp (replays cannot be refused).", "Sign timestamp + body and send the timestamp.", det, atOf(e.Signed))
	case len(e.Unsigned) > 0:
		return partial("Outbound events are sent without a signature.", "Sign each delivery with HMAC-SHA256 over timestamp and body.", det, atOf(e.Unsigned))
	}
	return fail("No outbound event delivery (webhooks or callbacks) was found.", "", nil)
}
