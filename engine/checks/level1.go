package checks

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/robots"
	"github.com/agentready/agentready/engine/xmldoc"
)

func init() {
	register(Definition{ID: "1.1", Level: 1, Name: "llms.txt", Effort: Small,
		LooksFor: "/llms.txt, then /.well-known/llms.txt, validated against the llmstxt.org format.",
		Rule:     "pass: one H1 title first, optional blockquote summary, H2 sections whose items are markdown links, at least one link. partial: the file exists but breaks that structure. fail: absent (or an HTML page).",
		Snippet:  starterLlmsTxt,
		Fix:      "Publish /llms.txt: `# Site name`, `> one-line summary`, then `## Docs` with items like `- [API reference](https://example.com/docs/api.md): what it covers`."}, needs(gather.Llms), llmsTxt)
	register(Definition{ID: "1.2", Level: 1, Name: "Agent Card", Effort: Medium,
		LooksFor: "/.well-known/agent-card.json (A2A), then the legacy /.well-known/agent.json.",
		Rule:     "pass: an A2A card valid for v1.0 (name, description, supportedInterfaces, version, capabilities, defaultInputModes, defaultOutputModes, skills with id/name/description/tags) or v0.3 (url and protocolVersion instead of supportedInterfaces). partial: JSON with name and description but missing required members, or only at the legacy path. fail: absent or not an agent card.",
		Snippet:  starterAgentCard,
		Fix:      "Publish an A2A Agent Card at /.well-known/agent-card.json with name, description, version, supportedInterfaces, capabilities, defaultInputModes, defaultOutputModes and skills."}, needs(gather.AgentCard), agentCard)
	register(Definition{ID: "1.3", Level: 1, Name: "OpenAPI Spec", Effort: Medium,
		LooksFor: "Links first (Link header or <link rel=\"service-desc\">, API catalog service-desc), then /openapi.json, /openapi.yaml, /swagger.json, /api-docs, /api/openapi.json, /docs/openapi.json, /v1/openapi.json, /.well-known/openapi.json.",
		Rule:     "pass: an OpenAPI 3.x or Swagger 2.0 document (JSON or YAML) with at least one path; `$ref`s that do not resolve within it (resolved as OpenAPI 3.1 and JSON Schema 2020-12 do: `$id`, `$anchor`, JSON pointers) are listed in the details and make only what each stands for unknown, never the document. partial: a document is found but does not load as OpenAPI, or has no paths. fail: none.",
		Fix:      "Publish your OpenAPI description at /openapi.json and link it: `Link: </openapi.json>; rel=\"service-desc\"`."}, needs(gather.Spec), openAPISpec)
	register(Definition{ID: "1.4", Level: 1, Name: "robots.txt AI Policy", Effort: Small,
		LooksFor: "/robots.txt parsed per RFC 9309; the effective rule for / for every known AI token (training crawlers, AI search crawlers, user-triggered fetchers, agents).",
		Rule:     "pass: the file names at least one AI token explicitly and no user-triggered fetcher, agent or AI search crawler is blocked from /. partial: AI agents are allowed only through `*` (no explicit AI policy), or there is no robots.txt. fail: user-triggered fetchers, agents or AI search crawlers are blocked from /, or robots.txt answers 5xx (RFC 9309: disallow all). Blocking only training crawlers is a legitimate policy and does not fail.",
		Snippet:  starterRobotsAI,
		Fix:      "State an explicit AI policy in robots.txt, e.g. `User-agent: ChatGPT-User`, `User-agent: Claude-User`, `User-agent: PerplexityBot` then `Allow: /` (block training crawlers such as GPTBot separately if you wish)."}, needs(gather.Robots), robotsAIPolicy)
	register(Definition{ID: "1.5", Level: 1, Name: "Documentation Accessibility", Effort: Large,
		LooksFor: "Documentation links (API catalog service-doc, OpenAPI externalDocs, rel=\"service-doc\", homepage links to /docs-like pages), else /docs, /documentation, /developers, /api/docs.",
		Rule:     "pass: a human-readable documentation page answers 200 without authentication and arrives whole. partial: an OpenAPI document exists but no documentation page was found, the docs page requires a login, or it cannot be read whole (over the 2 MiB body cap, or still arriving when the request's time runs out). fail: none found.",
		Fix:      "Publish public developer documentation at /docs and link it from the homepage and from your OpenAPI `externalDocs`."}, needs(gather.Docs, gather.Spec), docsAccess)
	register(Definition{ID: "1.6", Level: 1, Name: "CORS Headers", Effort: Medium,
		LooksFor: "The responses already fetched for discovery documents (1.1, 1.2, 1.3, 1.9, 1.10, 1.12, 1.16); every request carried an Origin header.",
		Rule:     "pass: every discovery document found carries Access-Control-Allow-Origin (`*` or the request Origin). partial: some do. fail: none do. na: no discovery document exists.",
		Fix:      "Serve discovery documents (llms.txt, agent card, OpenAPI, server card, API catalog) with `Access-Control-Allow-Origin: *` so browser-based agents can read them."}, needs(gather.Llms, gather.AgentCard, gather.Spec, gather.AISite, gather.SkillsIndex, gather.MCPCard, gather.Catalog), cors)
	register(Definition{ID: "1.7", Level: 1, Name: "AI Meta Tags", Effort: Small,
		LooksFor: "Homepage <meta name=\"llms:description\">, <meta name=\"llms:url\">, <meta name=\"llms:instructions\">.",
		Rule:     "pass: llms:description plus at least one other. partial: one or two of them without the full set. fail: none.",
		Snippet:  starterAIMeta,
		Fix:      "Add `<meta name=\"llms:description\" content=\"…\">` and `<meta name=\"llms:url\" content=\"/llms.txt\">` to the homepage <head>."}, needs(gather.Home), aiMeta)
	register(Definition{ID: "1.8", Level: 1, Name: "Skill File", Effort: Small,
		LooksFor: "/skill.md, then /SKILL.md.",
		Rule:     "pass: markdown with YAML front matter carrying name and description. partial: markdown without valid front matter. fail: absent.",
		Snippet:  starterSkillFile,
		Fix:      "Publish /skill.md starting with front matter: `---` / `name: your-site` / `description: what agents can do here` / `---`, then instructions."}, needs(gather.SkillFile), skillFile)
	register(Definition{ID: "1.9", Level: 1, Name: "AI Site Profile", Effort: Small,
		LooksFor: "/.well-known/ai.json.",
		Rule:     "pass: a JSON object with name and capabilities or skills. partial: another JSON object. fail: absent or invalid.",
		Snippet:  starterAISite,
		Fix:      "Publish /.well-known/ai.json: `{\"name\": \"…\", \"description\": \"…\", \"capabilities\": [\"…\"]}`."}, needs(gather.AISite), aiSite)
	register(Definition{ID: "1.10", Level: 1, Name: "Skills Index", Effort: Medium,
		LooksFor: "/.well-known/agent-skills/index.json (v0.2), then /.well-known/skills/index.json (v0.1).",
		Rule:     "pass: a v0.2 index with at least one valid entry (name, type, description, url, digest). partial: an index that is empty or has invalid entries, or only a v0.1 index. fail: absent.",
		Fix:      "Publish /.well-known/agent-skills/index.json with `$schema` and `skills: [{name, type: \"skill-md\", description, url, digest: \"sha256:…\"}]`."}, needs(gather.SkillsIndex), skillsIndex)
	register(Definition{ID: "1.11", Level: 1, Name: "Link Headers", Effort: Medium,
		LooksFor: "Homepage HTTP Link headers (RFC 8288) and <link> elements with agent-relevant relations: api-catalog, service-desc, service-doc, describedby, alternate type=text/markdown, or links to llms.txt, ai.json, agent-card.json or an MCP server card.",
		Rule:     "pass: at least one in an HTTP Link header. partial: only in HTML <link> elements. fail: neither.",
		Snippet:  starterLinkHeader,
		Fix:      "Send `Link: </.well-known/api-catalog>; rel=\"api-catalog\", </llms.txt>; rel=\"describedby\"; type=\"text/markdown\"` on the homepage response."}, needs(gather.Home), linkHeaders)
	register(Definition{ID: "1.12", Level: 1, Name: "MCP Server", Effort: Medium,
		LooksFor: "/.well-known/mcp/server-card, /.well-known/mcp/server-card.json, /.well-known/mcp.json, <link rel=\"mcp\">; then an MCP handshake with the endpoint the card names (server/discover and initialize); a session the server opens is ended with DELETE.",
		Rule:     "pass: a server card naming a Streamable HTTP endpoint on the same site, and that endpoint answers an MCP handshake. partial: a card that is invalid, names an endpoint on another site, or whose endpoint does not answer. fail: no card.",
		Snippet:  starterMCPCard,
		Fix:      "Publish an MCP server card at /.well-known/mcp/server-card with `name`, `version` and `remotes: [{\"type\": \"streamable-http\", \"url\": \"https://your.site/mcp\"}]`, and serve that endpoint."}, needs(gather.MCPCard), mcpServer)
	register(Definition{ID: "1.13", Level: 1, Name: "Page Token Efficiency", Effort: Large,
		LooksFor: "The homepage: raw tokens ≈ bytes/4, content tokens from visible text (without script, style, svg, noscript, template).",
		Rule:     "waste = 1 − content/raw; mitigation m = +0.10 if 1.1 passes, +0.10 if 1.17 passes. pass: waste < 0.70+m; partial: < 0.85+m; fail otherwise. A page over 0.95 waste never passes. na: homepage not HTML or under 400 bytes.",
		Fix:      "Trim inline scripts, styles and SVG from the homepage (load them as cached files), or offer agents a lean alternative: a valid llms.txt and markdown negotiation."}, needs(gather.Home, gather.Llms, gather.HomeMarkdown), tokenEfficiency)
	register(Definition{ID: "1.14", Level: 1, Name: "RSS/Atom Feed", Effort: Medium,
		LooksFor: "<link rel=\"alternate\"> of type RSS, Atom or JSON Feed (fetched and parsed), else /feed, /feed.xml, /rss.xml, /atom.xml, /index.xml, /rss.",
		Rule:     "pass: a feed that parses (RSS, Atom, JSON Feed). partial: a feed is linked but unreachable, invalid, or on another site. fail: none.",
		Fix:      "Publish a feed of your updates and link it: `<link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\">`."}, needs(gather.Feed), feed)
	register(Definition{ID: "1.15", Level: 1, Name: "Content Signals", Effort: Small,
		LooksFor: "robots.txt Content-Signal records (contentsignals.org).",
		Rule:     "pass: a record with at least one well-formed search/ai-input/ai-train = yes/no pair, in a group that applies to `*` or to AI agents. partial: a record that is malformed, has unknown keys only, or sits outside such a group. fail: none, or no robots.txt.",
		Snippet:  starterContentSignal,
		Fix:      "Add to the `User-agent: *` group of robots.txt: `Content-Signal: search=yes, ai-input=yes, ai-train=no` (your choices)."}, needs(gather.Robots), contentSignals)
	register(Definition{ID: "1.16", Level: 1, Name: "API Catalog", Effort: Medium,
		LooksFor: "/.well-known/api-catalog with Accept: application/linkset+json (RFC 9727), plus a HEAD request for its Link header.",
		Rule:     "pass: an RFC 9264 linkset served as application/linkset+json with a context object holding anchor and a service-desc target with href. partial: a linkset missing those, or served with another content type. fail: absent.",
		Snippet:  starterAPICatalog,
		Fix:      "Serve /.well-known/api-catalog as `application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"`: `{\"linkset\":[{\"anchor\":\"https://example.com/api\",\"service-desc\":[{\"href\":\"https://example.com/openapi.json\"}]}]}`."}, needs(gather.Catalog, gather.CatalogHead), apiCatalog)
	register(Definition{ID: "1.17", Level: 1, Name: "Markdown for Agents", Effort: Large,
		LooksFor: "The homepage requested again with Accept: text/markdown.",
		Rule:     "pass: 200, Content-Type text/markdown, a markdown body (not HTML) and Vary including Accept. partial: markdown without Vary: Accept, or with another content type, or only a text/markdown alternate link. fail: HTML comes back.",
		Fix:      "Answer `Accept: text/markdown` with a markdown rendering of the page, `Content-Type: text/markdown; charset=utf-8` and `Vary: Accept`."}, needs(gather.HomeMarkdown, gather.Home), markdownNegotiation)
	register(Definition{ID: "1.18", Level: 1, Name: "WebMCP", Effort: Large,
		LooksFor: "Homepage inline scripts and up to 5 same-origin scripts (no JavaScript is executed), and declarative toolname attributes.",
		Rule:     "pass: modelContext.registerTool (document or navigator) or declarative toolname form attributes. partial: only the withdrawn provideContext API. fail: none.",
		Fix:      "Register page tools with `document.modelContext.registerTool({name, description, inputSchema, execute})`, or annotate forms with `toolname` and `tooldescription`."}, needs(gather.Home, gather.Scripts), webMCP)
}

// Starters of level 1 (Definition.Snippet): what to publish, filled in for
// the scanned site by Definition.Starter.
const (
	starterLlmsTxt = "# {name}\n\n> One sentence: what {name} offers and to whom.\n\n## Docs\n\n" +
		"- [Getting started]({origin}/docs/getting-started.md): first steps\n" +
		"- [API reference]({origin}/docs/api.md): endpoints and examples\n\n" +
		"## Optional\n\n- [Changelog]({origin}/changelog.md): recent changes\n"
	starterRobotsAI = "# robots.txt — an explicit AI policy\n" +
		"User-agent: ChatGPT-User\nUser-agent: Claude-User\nUser-agent: Perplexity-User\n" +
		"User-agent: OAI-SearchBot\nUser-agent: Claude-SearchBot\nUser-agent: PerplexityBot\nAllow: /\n\n" +
		"# Training crawlers: your choice\nUser-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n"
	starterContentSignal = "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-input=yes, ai-train=no\n"
	starterAIMeta        = `<meta name="llms:description" content="What {name} offers, in one sentence.">` + "\n" +
		`<meta name="llms:url" content="{origin}/llms.txt">`
	starterSkillFile = "---\nname: {slug}\ndescription: What agents can do on {name}.\n---\n# {name}\n\nHow to use the site or its API.\n"
	starterAISite    = `{"name":"{name}","description":"What the site offers.","capabilities":["…"]}`
	starterAgentCard = `{"name":"{name} agent","description":"What the agent does.","version":"1.0.0",` +
		`"supportedInterfaces":[{"url":"{origin}/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["application/json"],` +
		`"skills":[{"id":"main","name":"Main skill","description":"What it does.","tags":["{name}"]}]}`
	starterMCPCard = `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",` +
		`"name":"{reverse}/mcp","version":"1.0.0","description":"What the server offers.",` +
		`"remotes":[{"type":"streamable-http","url":"{origin}/mcp"}],"capabilities":{"tools":{}}}`
	starterLinkHeader = `Link: <{origin}/.well-known/api-catalog>; rel="api-catalog", <{origin}/llms.txt>; rel="describedby"; type="text/markdown"`
	starterAPICatalog = `{"linkset":[{"anchor":"{origin}/api",` +
		`"service-desc":[{"href":"{origin}/openapi.json","type":"application/vnd.oai.openapi+json"}],` +
		`"service-doc":[{"href":"{origin}/docs","type":"text/html"}]}]}`
)

func llmsTxt(in gather.Source) Outcome {
	l := gather.Get(in, gather.Llms)
	r := l.Resp
	if !r.Found() {
		return fail("No llms.txt was found at /llms.txt or /.well-known/llms.txt ("+absence(r)+").", "", probeOf(r))
	}
	rep := l.Report
	det := map[string]any{"title": rep.Title, "sections": len(rep.Sections), "links": rep.Links, "findings": first(rep.Findings, 20),
		"linksToLlmsFull": strings.Contains(string(r.Body), "llms-full.txt")}
	if rep.Valid {
		return pass(fmt.Sprintf("llms.txt is valid: %q with %s and %s.", rep.Title, plural(len(rep.Sections), "section", "sections"), plural(rep.Links, "link", "links")), det, at(r))
	}
	msg := "llms.txt exists but breaks the llmstxt.org format"
	for _, f := range rep.Findings {
		if f.Severity == "error" {
			if f.Line > 0 {
				msg += fmt.Sprintf(" (line %d: %s)", f.Line, f.Message)
			} else {
				msg += " (" + f.Message + ")"
			}
			break
		}
	}
	return partial(msg+".", "Fix the findings listed in details: the file must start with `# Title`, and list links as `- [name](url): notes` under `## Section` headings.", det, at(r))
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func agentCard(in gather.Source) Outcome {
	doc := gather.Get(in, gather.AgentCard)
	r := doc.Resp
	if !r.Found() {
		return fail("No A2A Agent Card at /.well-known/agent-card.json or /.well-known/agent.json ("+absence(r)+").", "", probeOf(r))
	}
	if doc.Err != nil {
		return fail("The agent card is not a JSON object: "+shortErr(doc.Err)+".", "Serve valid JSON at /.well-known/agent-card.json.", nil)
	}
	rep := doc.Report
	switch {
	case rep.Valid && !doc.Legacy:
		return pass(fmt.Sprintf("A valid A2A v%s agent card for %q with %s.", rep.Version, rep.Name, plural(rep.Skills, "skill", "skills")), rep, at(r))
	case rep.Valid:
		return partial(fmt.Sprintf("A valid A2A v%s agent card exists, but only at the legacy path /.well-known/agent.json.", rep.Version),
			"Serve the same card at /.well-known/agent-card.json, the path A2A clients look up.", rep, at(r))
	case rep.HasIdentity:
		return partial("The agent card names itself but misses required members: "+strings.Join(rep.Missing, ", ")+".",
			"Add the missing members: "+strings.Join(rep.Missing, ", ")+" (see details for problems in skills and interfaces).", rep, at(r))
	}
	return fail("The JSON at the agent-card path is not an agent card (no name and description).", "", rep)
}

func openAPISpec(in gather.Source) Outcome {
	doc := gather.Get(in, gather.Spec)
	if s := doc.Spec; s != nil {
		det := map[string]any{"version": s.Version, "title": s.Title, "paths": s.Paths, "operations": len(s.Operations), "source": doc.Source, "findings": s.Findings}
		if s.Paths == 0 && len(s.Operations) == 0 {
			return partial(fmt.Sprintf("An OpenAPI %s document was found but declares no paths.", s.Version), "Describe your API's paths and operations in the document.", det, at(doc.Resp))
		}
		msg := fmt.Sprintf("OpenAPI %s document %q with %s and %s (found via %s).", s.Version, s.Title, plural(s.Paths, "path", "paths"), plural(len(s.Operations), "operation", "operations"), doc.Source)
		if n := len(s.Unresolved); n > 0 {
			// Still a description by the check's rule; what a broken
			// reference stood for is unknown, the rest is graded.
			det["unresolved"] = first(s.Unresolved, 20)
			msg += fmt.Sprintf(" %s not resolve within it, so what %s for is unknown to agents (see details).", plural(n, "$ref does", "$refs do"), map[bool]string{true: "it stands", false: "they stand"}[n == 1])
		}
		return pass(msg, det, at(doc.Resp))
	}
	if doc.Err != nil {
		return partial("A document that looks like an OpenAPI description was found but does not load: "+shortErr(doc.Err)+".",
			"Validate the document with an OpenAPI validator and fix the error shown.", map[string]any{"error": doc.Err.Error()}, at(doc.Resp))
	}
	return fail("No OpenAPI or Swagger document was found via links or at the common paths.", "", map[string]any{"tried": gather.SpecPaths})
}

func robotsAIPolicy(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	r := rb.Resp
	if r.Err != nil || r.Status >= 500 {
		return fail("robots.txt is unreachable ("+absence(r)+"); RFC 9309 tells crawlers to assume everything is disallowed.",
			"Make /robots.txt answer 200 (or 404 if you have none); a 5xx or timeout blocks every crawler.", probeOf(r))
	}
	if rb.File == nil {
		return partial("There is no robots.txt ("+absence(r)+"), so all crawlers are allowed but you state no AI policy.", "", nil, "")
	}
	f := rb.File
	blocked := map[string][]string{}
	var explicit []string
	for _, c := range Crawlers {
		d := f.Check(c.Token, "/")
		if d.Explicit {
			explicit = append(explicit, c.Token)
		}
		if !d.Allowed {
			blocked[c.Class] = append(blocked[c.Class], c.Token)
		}
	}
	det := map[string]any{"explicit": explicit, "blocked": blocked}
	var bad []string
	for _, class := range []string{"user", "agent", "search"} {
		bad = append(bad, blocked[class]...)
	}
	if len(bad) > 0 {
		return Outcome{Status: report.Fail, Message: fmt.Sprintf("robots.txt blocks agents that fetch for people or for AI search from /: %s.", strings.Join(first(bad, 8), ", ")),
			Recommendation: "Allow user-triggered fetchers (ChatGPT-User, Claude-User, Perplexity-User) and AI search crawlers (OAI-SearchBot, Claude-SearchBot, PerplexityBot); block training crawlers separately if you wish.",
			Details:        det, FoundAt: at(r)}
	}
	if len(explicit) == 0 {
		return partial("robots.txt lets AI agents in only through `User-agent: *`; it states no AI policy.", "", det, at(r))
	}
	msg := fmt.Sprintf("robots.txt names %s explicitly and lets user-triggered fetchers and AI search in", plural(len(explicit), "AI token", "AI tokens"))
	if n := len(blocked["training"]); n > 0 {
		msg += fmt.Sprintf(" (training crawlers blocked: %d)", n)
	}
	return pass(msg+".", det, at(r))
}

var loginPath = regexp.MustCompile(`(?i)/(login|log-in|signin|sign-in|sign_in|auth|sso|oauth|account/login)(/|$|\?)`)

func docsAccess(in gather.Source) Outcome {
	docs, spec := gather.Get(in, gather.Docs), gather.Get(in, gather.Spec)
	r := docs.Resp
	if r != nil && r.Err == nil {
		det := map[string]any{"url": at(r), "status": r.Status, "source": docs.Source}
		switch {
		case r.Status == 401 || r.Status == 403:
			return partial(fmt.Sprintf("The documentation at %s requires authentication (%d).", r.RequestURL, r.Status),
				"Make developer documentation public; agents cannot log in to read it.", det, at(r))
		case r.OK() && !r.Complete() && (r.LooksHTML() || r.ContentType() == "text/markdown"):
			// A page that is there but cannot be read whole is neither public
			// documentation nor no documentation.
			det["cut"], det["bytesRead"] = cutReason(r), len(r.Body)
			return partial(fmt.Sprintf("The documentation page at %s answered %d, but its body was cut after %d bytes: %s.", at(r), r.Status, len(r.Body), cutReason(r)),
				"Serve the documentation page whole and promptly: a complete response within a few seconds, under 2 MiB (split larger pages).", det, at(r))
		case docs.Found:
			if len(r.Redirects) > 0 && loginPath.MatchString(at(r)) {
				return partial("The documentation link redirects to a login page ("+at(r)+").", "Make developer documentation public; agents cannot log in to read it.", det, at(r))
			}
			return pass("Public documentation answers at "+at(r)+" (found via "+docs.Source+").", det, at(r))
		}
	}
	if spec.Spec != nil {
		return partial("An OpenAPI document exists, but no human-readable documentation page was found.", "", map[string]any{"tried": gather.DocsPaths}, "")
	}
	return fail("No documentation page was found via links or at /docs, /documentation, /developers, /api/docs.", "", map[string]any{"tried": gather.DocsPaths})
}

func cors(in gather.Source) Outcome {
	docs := []struct {
		name string
		r    *fetch.Response
	}{{"llms.txt", gather.Get(in, gather.Llms).Resp}, {"agent card", gather.Get(in, gather.AgentCard).Resp}, {"OpenAPI", gather.Get(in, gather.Spec).Resp},
		{"ai.json", gather.Get(in, gather.AISite).Resp}, {"skills index", gather.Get(in, gather.SkillsIndex).Resp},
		{"MCP server card", gather.Get(in, gather.MCPCard).Resp}, {"API catalog", gather.Get(in, gather.Catalog).Resp}}
	scanner := gather.SiteOf(in).ScannerOrigin
	var with, without []string
	for _, d := range docs {
		if !d.r.Found() {
			continue
		}
		acao := strings.TrimSpace(d.r.Header.Get("Access-Control-Allow-Origin"))
		if acao == "*" || (acao != "" && strings.EqualFold(acao, scanner)) {
			with = append(with, d.name)
		} else {
			without = append(without, d.name)
		}
	}
	det := map[string]any{"allowed": with, "missing": without}
	switch {
	case len(with)+len(without) == 0:
		return na("No discovery documents were found, so there is nothing for CORS to cover.")
	case len(without) == 0:
		return pass(fmt.Sprintf("All %s carry Access-Control-Allow-Origin.", plural(len(with), "discovery document", "discovery documents")), det, "")
	case len(with) > 0:
		return partial(fmt.Sprintf("%d of %d discovery documents carry Access-Control-Allow-Origin; missing on %s.", len(with), len(with)+len(without), strings.Join(without, ", ")), "", det, "")
	}
	return fail(fmt.Sprintf("None of the discovery documents (%s) carry Access-Control-Allow-Origin.", strings.Join(without, ", ")), "", det)
}

func aiMeta(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	present := map[string]bool{}
	for _, n := range []string{"llms:description", "llms:url", "llms:instructions"} {
		if v, ok := h.Page.MetaNamed(n); ok && strings.TrimSpace(v) != "" {
			present[n] = true
		}
	}
	det := present
	switch {
	case present["llms:description"] && len(present) >= 2:
		return pass(fmt.Sprintf("The homepage carries %d of the 3 llms:* meta tags.", len(present)), det, at(h.Resp))
	case len(present) > 0:
		return partial(fmt.Sprintf("The homepage carries %d of the 3 llms:* meta tags but not llms:description with another.", len(present)), "", det, at(h.Resp))
	}
	return fail("The homepage has no llms:description, llms:url or llms:instructions meta tags"+homeNote(h)+".", "", nil)
}

func skillFile(in gather.Source) Outcome {
	doc := gather.Get(in, gather.SkillFile)
	r := doc.Resp
	if !r.Found() {
		return fail("No /skill.md or /SKILL.md ("+absence(r)+").", "", probeOf(r))
	}
	fm, ok := doc.FrontMatter, doc.HasFrontMatter
	name, _ := fm["name"].(string)
	desc, _ := fm["description"].(string)
	if ok && name != "" && desc != "" {
		return pass(fmt.Sprintf("Skill file %q with front matter name and description.", name), map[string]any{"name": name}, at(r))
	}
	return partial("The skill file exists but has no YAML front matter with name and description.", "", map[string]any{"frontMatter": ok}, at(r))
}

func aiSite(in gather.Source) Outcome {
	doc := gather.Get(in, gather.AISite)
	r := doc.Resp
	if !r.Found() {
		return fail("No /.well-known/ai.json ("+absence(r)+").", "", probeOf(r))
	}
	obj, ok, keys := doc.IsObject, doc.Valid, doc.Keys
	switch {
	case ok:
		return pass("ai.json names the site and lists its capabilities or skills.", map[string]any{"keys": keys}, at(r))
	case obj:
		return partial("ai.json is a JSON object but lacks name plus capabilities or skills.", "", map[string]any{"keys": keys}, at(r))
	}
	return fail("/.well-known/ai.json is not a JSON object.", "Serve a JSON object at /.well-known/ai.json.", nil)
}

func skillsIndex(in gather.Source) Outcome {
	doc := gather.Get(in, gather.SkillsIndex)
	r := doc.Resp
	if !r.Found() {
		return fail("No Agent Skills index at /.well-known/agent-skills/index.json or /.well-known/skills/index.json ("+absence(r)+").", "", probeOf(r))
	}
	ix, err := doc.Index, doc.Err
	if err != nil {
		return partial("The skills index is not valid JSON: "+shortErr(err)+".", "", nil, at(r))
	}
	switch {
	case ix.Version == "0.2" && ix.Valid > 0:
		return pass(fmt.Sprintf("Agent Skills index v0.2 with %d valid of %s.", ix.Valid, plural(ix.Entries, "entry", "entries")), ix, at(r))
	case ix.Version == "0.1":
		return partial(fmt.Sprintf("Only a v0.1 skills index (%s); clients now read /.well-known/agent-skills/index.json (v0.2).", plural(ix.Entries, "entry", "entries")),
			"Publish a v0.2 index at /.well-known/agent-skills/index.json with `$schema`, and name, type, description, url, digest per skill.", ix, at(r))
	}
	return partial(fmt.Sprintf("The skills index has no valid entries (%s).", plural(ix.Entries, "entry", "entries")), "Give each skill name, type, description, url and a sha256 digest.", ix, at(r))
}

var agentRels = map[string]bool{"api-catalog": true, "service-desc": true, "service-doc": true, "describedby": true, "mcp": true}

func agentLink(rels []string, typ, href string) (string, bool) {
	for _, r := range rels {
		if agentRels[r] {
			return r, true
		}
		if r == "alternate" && strings.HasPrefix(typ, "text/markdown") {
			return "alternate text/markdown", true
		}
	}
	u, err := url.Parse(href)
	if err == nil {
		for _, suffix := range []string{"/llms.txt", "/ai.json", "/agent-card.json", "/server-card", "/server-card.json", "/mcp.json"} {
			if strings.HasSuffix(u.Path, suffix) {
				return "link to " + strings.TrimPrefix(suffix, "/"), true
			}
		}
	}
	return "", false
}

func linkHeaders(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	var header, html []string
	for _, l := range h.Links {
		if what, ok := agentLink(l.Rels, l.Type, l.Href); ok {
			header = append(header, what+" → "+l.Href)
		}
	}
	if h.Page != nil {
		for _, l := range h.Page.Links {
			if what, ok := agentLink(l.Rels, l.Type, l.Href); ok {
				html = append(html, what+" → "+l.Href)
			}
		}
	}
	det := map[string]any{"header": first(header, 10), "html": first(html, 10)}
	switch {
	case len(header) > 0:
		return pass(fmt.Sprintf("The homepage's HTTP Link header carries %s for agents.", plural(len(header), "relation", "relations")), det, at(h.Resp))
	case len(html) > 0:
		return partial(fmt.Sprintf("Agent-relevant links appear only as HTML <link> elements (%d), not in an HTTP Link header.", len(html)),
			"Repeat them in an HTTP `Link` header so agents find them without parsing HTML.", det, at(h.Resp))
	}
	return fail("The homepage links no agent-relevant documents (api-catalog, service-desc, llms.txt…), neither in a Link header nor in <link> elements.", "", nil)
}

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

func tokenEfficiency(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil || len(h.Resp.Body) < 400 {
		return na("The homepage is not an HTML page of at least 400 bytes.")
	}
	raw := int(math.Ceil(float64(len(h.Resp.Body)) / 4))
	content := int(math.Ceil(float64(h.Page.VisibleBytes) / 4))
	waste := 1 - float64(content)/float64(raw)
	m := 0.0
	var mit []string
	// The mitigations are 1.1 and 1.17 themselves, judged over the same inputs.
	if llmsTxt(in).Status == report.Pass {
		m += 0.10
		mit = append(mit, "llms.txt")
	}
	if markdownNegotiation(in).Status == report.Pass {
		m += 0.10
		mit = append(mit, "markdown negotiation")
	}
	det := map[string]any{"rawTokens": raw, "contentTokens": content, "wastePercent": int(math.Round(waste * 100)), "mitigations": mit}
	msg := fmt.Sprintf("%.0f%% of the homepage's ~%d tokens are markup, scripts or styles rather than content", waste*100, raw)
	switch {
	case waste < 0.70+m && waste <= 0.95:
		return pass(msg+".", det, at(h.Resp))
	case waste < 0.85+m:
		return partial(msg+".", "", det, at(h.Resp))
	}
	return fail(msg+".", "", det)
}

func feed(in gather.Source) Outcome {
	doc := gather.Get(in, gather.Feed)
	r, info := doc.Resp, doc.Info
	if doc.Linked && r == nil {
		return partial("The homepage links a feed on another site, which the scanner does not fetch.", "Serve the feed from your own site.", nil, "")
	}
	if info.Kind.IsFeed() {
		how := "at " + r.RequestURL
		if doc.Linked {
			how = "linked from the homepage"
		}
		return pass(fmt.Sprintf("%s feed with %s, %s.", feedName[info.Kind], plural(info.Entries, "entry", "entries"), how), info, at(r))
	}
	if doc.Linked {
		return partial("The homepage links a feed, but "+r.RequestURL+" is not a valid feed ("+absence(r)+").", "Make the linked feed URL serve valid RSS, Atom or JSON Feed.", probeOf(r), at(r))
	}
	msg := "No feed is linked from the homepage or served at /feed, /feed.xml, /rss.xml, /atom.xml, /index.xml, /rss"
	if r != nil && r.OK() && !r.Complete() {
		msg += " (" + r.RequestURL + " " + absence(r) + ")"
	}
	return fail(msg+".", "", map[string]any{"tried": gather.FeedPaths})
}

var feedName = map[xmldoc.Kind]string{xmldoc.RSS: "An RSS", xmldoc.RDF: "An RSS 1.0", xmldoc.Atom: "An Atom", xmldoc.JSONFeed: "A JSON Feed"}

func appliesToAI(g *robots.Group) bool {
	for _, ag := range g.Agents {
		if robots.IsStar(ag) {
			return true
		}
		for _, c := range Crawlers {
			if robots.Names(ag, c.Token) {
				return true
			}
		}
	}
	return false
}

func contentSignals(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	f := rb.File
	if f == nil {
		return fail(robotsMissing(rb)+", so no Content-Signal preferences are declared.", "", nil)
	}
	type sig struct {
		Agents []string          `json:"agents"`
		Pairs  map[string]string `json:"signals"`
		Bad    []string          `json:"invalid,omitempty"`
		Line   int               `json:"line"`
	}
	var good, other []sig
	for _, g := range f.Groups {
		for _, s := range g.ContentSignals {
			e := sig{Agents: g.Agents, Pairs: s.Pairs, Bad: s.Bad, Line: s.Line}
			if s.Valid() && appliesToAI(g) {
				good = append(good, e)
			} else {
				other = append(other, e)
			}
		}
	}
	for _, s := range f.LooseSignals {
		other = append(other, sig{Pairs: s.Pairs, Bad: s.Bad, Line: s.Line})
	}
	det := map[string]any{"applying": good, "other": other}
	switch {
	case len(good) > 0:
		return pass(fmt.Sprintf("robots.txt declares Content-Signal preferences (line %d).", good[0].Line), det, at(rb.Resp)+fmt.Sprintf("#L%d", good[0].Line))
	case len(other) > 0:
		return partial("robots.txt has Content-Signal records, but none is a well-formed search/ai-input/ai-train=yes|no pair in a group for `*` or AI agents.", "", det, at(rb.Resp)+fmt.Sprintf("#L%d", other[0].Line))
	}
	return fail("robots.txt declares no Content-Signal preferences.", "", nil)
}

func apiCatalog(in gather.Source) Outcome {
	cat, head := gather.Get(in, gather.Catalog), gather.Get(in, gather.CatalogHead)
	r := cat.Resp
	if !r.Found() {
		return fail("No API catalog at /.well-known/api-catalog ("+absence(r)+").", "", probeOf(r))
	}
	ct := r.ContentType()
	det := map[string]any{"contentType": ct, "profile": strings.Contains(r.Header.Get("Content-Type"), "rfc9727")}
	if head != nil {
		det["headLinkHeader"] = strings.Contains(strings.ToLower(strings.Join(head.Header.Values("Link"), ",")), "api-catalog")
	}
	ls := cat.Linkset
	if ls == nil {
		msg := "The API catalog is not an RFC 9264 linkset"
		if cat.Err != nil {
			msg += " (" + shortErr(cat.Err) + ")"
		}
		return partial(msg+".", "", det, at(r))
	}
	det["contexts"], det["relations"] = len(ls.Contexts), ls.Relations()
	if len(ls.Findings) > 0 {
		det["findings"] = first(ls.Findings, 10)
	}
	switch {
	case !ls.Complete():
		return partial("The API catalog linkset has no context with an anchor and a service-desc link.", "", det, at(r))
	case ct != "application/linkset+json":
		return partial("The API catalog is a valid linkset but is served as "+ct+", not application/linkset+json.", "Serve it with `Content-Type: application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"`.", det, at(r))
	}
	return pass(fmt.Sprintf("RFC 9727 API catalog with %s.", plural(len(ls.Contexts), "API", "APIs")), det, at(r))
}

func markdownNegotiation(in gather.Source) Outcome {
	r, h := gather.Get(in, gather.HomeMarkdown), gather.Get(in, gather.Home)
	alt := ""
	for _, l := range h.Links {
		if hasRel(l.Rels, "alternate") && strings.HasPrefix(l.Type, "text/markdown") {
			alt = l.Href
		}
	}
	if h.Page != nil && alt == "" {
		for _, l := range h.Page.Links {
			if l.HasRel("alternate") && strings.HasPrefix(l.Type, "text/markdown") {
				alt = l.Href
			}
		}
	}
	if served, ct, vary := markdownServed(r); served {
		det := map[string]any{"contentType": ct, "varyAccept": vary, "bytes": len(r.Body), "htmlBytes": len(h.Resp.Body)}
		switch {
		case ct == "text/markdown" && vary:
			return pass("The homepage answers Accept: text/markdown with markdown and Vary: Accept.", det, at(r))
		case ct == "text/markdown":
			return partial("The homepage serves markdown, but without Vary: Accept, so caches may hand HTML readers markdown (or agents HTML).", "Add `Vary: Accept` to both representations.", det, at(r))
		default:
			return partial("Asked for markdown, the homepage returns a non-HTML body typed "+ct+" instead of text/markdown.", "Label the markdown `Content-Type: text/markdown; charset=utf-8` and add `Vary: Accept`.", det, at(r))
		}
	}
	if alt != "" {
		return partial("Markdown is offered only through an alternate link ("+alt+"), not by content negotiation.", "", map[string]any{"alternate": alt}, at(h.Resp))
	}
	if r.Err != nil || !r.OK() || !r.Complete() {
		return fail("Asked for text/markdown, the homepage did not answer with content ("+absence(r)+").", "", nil)
	}
	return fail("Asked for text/markdown, the homepage returns HTML ("+orUnknown(r.ContentType())+").", "", map[string]string{"contentType": r.ContentType()})
}

// markdownServed reads an answer to Accept: text/markdown: whether it is
// content that is not HTML, its type, and whether it varies on Accept.
// 1.17 judges the homepage with it, the deep scan's page sample each page.
func markdownServed(r *fetch.Response) (served bool, contentType string, varyAccept bool) {
	if r == nil || !r.OK() || !r.Complete() || r.LooksHTML() || len(r.Body) == 0 {
		return false, "", false
	}
	return true, r.ContentType(), headerHas(r.Header, "Vary", "Accept")
}

func hasRel(rels []string, r string) bool {
	for _, x := range rels {
		if x == r {
			return true
		}
	}
	return false
}

var provideContext = regexp.MustCompile(`modelContext\s*(\??\.\s*|\[\s*["']\s*)provideContext`)

func webMCP(in gather.Source) Outcome {
	h, scripts := gather.Get(in, gather.Home), gather.Get(in, gather.Scripts)
	if h.Page == nil {
		return noPage(h)
	}
	if h.Page.ToolForms > 0 {
		return pass(fmt.Sprintf("The homepage declares %s with the WebMCP toolname attribute.", plural(h.Page.ToolForms, "tool", "tools")), nil, at(h.Resp))
	}
	type src struct {
		where, text string
	}
	var srcs []src
	for _, s := range h.Page.Scripts {
		if s.Inline != "" {
			srcs = append(srcs, src{at(h.Resp) + " (inline script)", s.Inline})
		}
	}
	for _, r := range scripts {
		if r.OK() {
			srcs = append(srcs, src{at(r), string(r.Body)})
		}
	}
	legacy := ""
	for _, s := range srcs {
		if gather.WebMCPRegister.MatchString(s.text) {
			return pass("The page registers WebMCP tools with modelContext.registerTool.", nil, s.where)
		}
		if legacy == "" && provideContext.MatchString(s.text) {
			legacy = s.where
		}
	}
	if legacy != "" {
		return partial("The page uses the withdrawn WebMCP provideContext API.", "Move to `document.modelContext.registerTool()`; provideContext was removed from the WebMCP draft.", nil, legacy)
	}
	return fail(fmt.Sprintf("No WebMCP tool registration in the homepage or its %s.", plural(len(scripts), "same-origin script", "same-origin scripts")), "", nil)
}
