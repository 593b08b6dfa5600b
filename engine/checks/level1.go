package checks

import (
	"github.com/agentready/agentready/engine/gather"
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
