package repo

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
)

func atOf(h []Hit) string {
	if len(h) == 0 {
		return ""
	}
	return h[0].At()
}

func places(h []Hit) []string {
	var out []string
	for i, x := range h {
		if i == 10 {
			break
		}
		out = append(out, x.At()+" "+x.What)
	}
	return out
}

func result(id string, st report.Status, msg, rec string, foundAt string, details any) report.Check {
	def, _ := checks.ByID(id)
	c := report.Check{ID: id, Name: def.Name, Status: st, Passed: st == report.Pass, Level: 5, Category: def.Category, Message: msg, FoundAt: foundAt}
	if st != report.Pass && st != report.NA {
		c.Recommendation = rec
		if rec == "" {
			c.Recommendation = def.Fix
		}
	}
	if details != nil {
		b, _ := json.Marshal(details)
		c.Details = string(b)
	}
	return c
}

func judge(e *evidence) []report.Check {
	return []report.Check{
		intentEndpoints(e), agentSessions(e), scopedTokens(e), auditLogs(e), sandbox(e),
		consequenceLabels(e), toolSchemas(e), multiFramework(e), agentInstructions(e), signedEvents(e),
	}
}

func intentEndpoints(e *evidence) report.Check {
	var intents []Hit
	seen := map[string]bool{}
	for _, r := range e.routes {
		if v := checks.ActionVerb(r.Path); v != "" && !seen[r.Method+" "+r.Path] {
			seen[r.Method+" "+r.Path] = true
			intents = append(intents, Hit{File: r.File, Line: r.Line, What: strings.TrimSpace(r.Method + " " + r.Path)})
		}
	}
	det := map[string]any{"routes": len(e.routes), "intent": places(intents)}
	switch n := len(intents); {
	case n >= 2:
		return result("5.1", report.Pass, fmt.Sprintf("%d intent-shaped routes beside the CRUD ones, e.g. %s.", n, intents[0].What), "", intents[0].At(), det)
	case n == 1:
		return result("5.1", report.Partial, "One intent-shaped route ("+intents[0].What+"); the rest are CRUD.", "", intents[0].At(), det)
	}
	return result("5.1", report.Fail, fmt.Sprintf("None of the %d registered routes is named for an action (send, cancel, refund, scan…).", len(e.routes)), "", "", det)
}

func agentSessions(e *evidence) report.Check {
	if len(e.sessionHeaders) > 0 {
		return result("5.2", report.Pass, "Handlers read an agent session header ("+e.sessionHeaders[0].What+").", "", atOf(e.sessionHeaders), places(e.sessionHeaders))
	}
	return result("5.2", report.Fail, "No handler reads a session header agents can attach to (Mcp-Session-Id, X-Agent-Session, conversation or thread ids).", "", "", nil)
}

func scopedTokens(e *evidence) report.Check {
	det := map[string]any{"issuance": places(e.scopeIssue), "enforcement": places(e.scopeEnforce)}
	switch {
	case len(e.scopeIssue) > 0 && len(e.scopeEnforce) > 0:
		return result("5.3", report.Pass, "Tokens are issued with scopes and routes check them.", "", atOf(e.scopeIssue), det)
	case len(e.scopeIssue) > 0:
		return result("5.3", report.Partial, "Tokens carry scopes, but no route checks a scope.", "Check the required scope on each route (a requireScope middleware).", atOf(e.scopeIssue), det)
	case len(e.scopeEnforce) > 0:
		return result("5.3", report.Partial, "Routes check scopes, but no token issuance with scopes was found.", "Issue tokens with a scope claim (OAuth token response or JWT scope).", atOf(e.scopeEnforce), det)
	}
	return result("5.3", report.Fail, "Neither scoped token issuance nor scope enforcement was found.", "", "", nil)
}

func auditLogs(e *evidence) report.Check {
	if len(e.auditLogs) > 0 {
		return result("5.4", report.Pass, "Structured logs record the acting client or agent ("+e.auditLogs[0].What+").", "", atOf(e.auditLogs), places(e.auditLogs))
	}
	return result("5.4", report.Fail, "No structured log or audit record carries the acting agent or client identity with the action.", "", "", nil)
}

func sandbox(e *evidence) report.Check {
	det := map[string]any{"reads": places(e.sandboxReads), "configuration": places(e.sandboxConfigs)}
	switch {
	case len(e.sandboxReads) > 0:
		return result("5.5", report.Pass, "Code reads a sandbox or test-mode setting ("+e.sandboxReads[0].What+").", "", atOf(e.sandboxReads), det)
	case len(e.sandboxConfigs) > 0:
		return result("5.5", report.Partial, "Sandbox configuration exists, but no code reads it.", "Read the sandbox setting in code (base URL or test mode) so agents can really use it.", atOf(e.sandboxConfigs), det)
	}
	return result("5.5", report.Fail, "No sandbox, test mode or dry-run setting that code reads.", "", "", nil)
}

func consequenceLabels(e *evidence) report.Check {
	if len(e.consequence) > 0 {
		return result("5.6", report.Pass, "Actions carry consequence labels ("+e.consequence[0].What+").", "", atOf(e.consequence), places(e.consequence))
	}
	return result("5.6", report.Fail, "No destructive or irreversible action is labelled (x-consequence, destructiveHint, confirmation flags).", "", "", nil)
}

func toolSchemas(e *evidence) report.Check {
	var valid, invalid []Hit
	for _, t := range e.tools {
		h := Hit{File: t.File, Line: t.Line, What: t.Ecosystem + " " + t.Name}
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
		return result("5.7", report.Pass, fmt.Sprintf("%d valid tool definitions (name, description, input schema).", len(valid)), "", atOf(valid), det)
	case len(invalid) > 0:
		return result("5.7", report.Partial, fmt.Sprintf("%d tool definitions, none valid: %s.", len(invalid), invalid[0].What), "", atOf(invalid), det)
	}
	return result("5.7", report.Fail, "No tool definitions (MCP tools, OpenAI functions, Anthropic tools).", "", "", nil)
}

func multiFramework(e *evidence) report.Check {
	eco := map[string]Hit{}
	for _, t := range e.tools {
		if _, ok := eco[t.Ecosystem]; !ok && t.Problem == "" {
			eco[t.Ecosystem] = Hit{File: t.File, Line: t.Line, What: t.Ecosystem}
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
		return result("5.8", report.Fail, "No valid tool definitions for any agent ecosystem.", "", "", nil)
	case 1:
		return result("5.8", report.Partial, "Tool definitions for one ecosystem only ("+names[0]+").", "Generate definitions for a second ecosystem (OpenAI functions, Anthropic tools) from the same source.", eco[names[0]].At(), det)
	}
	return result("5.8", report.Pass, "Tool definitions for "+strings.Join(names, ", ")+".", "", eco[names[0]].At(), det)
}

func agentInstructions(e *evidence) report.Check {
	if d := e.agentsMD; d != nil {
		var covered []string
		for _, k := range []string{"build", "test", "conventions"} {
			if _, ok := d.Sections[k]; ok {
				covered = append(covered, k)
			}
		}
		det := map[string]any{"covers": covered, "bytes": d.Bytes}
		if len(covered) >= 2 && d.Bytes >= 200 {
			return result("5.9", report.Pass, "AGENTS.md covers "+strings.Join(covered, ", ")+".", "", d.File+":1", det)
		}
		return result("5.9", report.Partial, "AGENTS.md is thin: it covers "+fmt.Sprint(len(covered))+" of build, test and conventions.", "Say how to build, how to test and which conventions hold.", d.File+":1", det)
	}
	if len(e.vendorFiles) > 0 {
		return result("5.9", report.Partial, "Only vendor-specific agent instructions ("+e.vendorFiles[0].File+"), no AGENTS.md.", "Move the instructions to AGENTS.md, which every agent reads.", atOf(e.vendorFiles), places(e.vendorFiles))
	}
	return result("5.9", report.Fail, "No AGENTS.md (or any agent instructions file).", "", "", nil)
}

func signedEvents(e *evidence) report.Check {
	det := map[string]any{"signed": places(e.signed), "timestamp": places(e.timestamped), "unsigned": places(e.unsigned)}
	switch {
	case len(e.signed) > 0 && len(e.timestamped) > 0:
		return result("5.10", report.Pass, "Outbound events are signed with an HMAC signature header and a timestamp.", "", atOf(e.signed), det)
	case len(e.signed) > 0:
		return result("5.10", report.Partial, "Outbound events are signed, but without a timestamp (replays cannot be refused).", "Sign timestamp + body and send the timestamp.", atOf(e.signed), det)
	case len(e.unsigned) > 0:
		return result("5.10", report.Partial, "Outbound events are sent without a signature.", "Sign each delivery with HMAC-SHA256 over timestamp and body.", atOf(e.unsigned), det)
	}
	return result("5.10", report.Fail, "No outbound event delivery (webhooks or callbacks) was found.", "", "", nil)
}
