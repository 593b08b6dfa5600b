package mcpserver

import (
	"fmt"
	"net/url"
	"strings"
)

// effort orders fixes: publishing a static file comes before changing the app.
func effort(id string) int {
	switch id {
	case "1.1", "1.4", "1.15", "4.2", "1.7", "1.9", "1.8", "4.4", "4.6", "4.9":
		return 0 // a file or a line in the head
	case "1.16", "1.2", "1.10", "1.11", "1.6", "4.7", "4.8", "1.12", "1.3":
		return 1 // a discovery document or header
	}
	return 2
}

// snippet is a starter to publish for a check, filled in for the site.
func snippet(id, site string) string {
	u, err := url.Parse(site)
	if err != nil {
		return ""
	}
	origin := u.Scheme + "://" + u.Host
	name := strings.TrimPrefix(u.Hostname(), "www.")
	switch id {
	case "1.1":
		return fmt.Sprintf("# %s\n\n> One sentence: what %s offers and to whom.\n\n## Docs\n\n- [Getting started](%s/docs/getting-started.md): first steps\n- [API reference](%s/docs/api.md): endpoints and examples\n\n## Optional\n\n- [Changelog](%s/changelog.md): recent changes\n", name, name, origin, origin, origin)
	case "1.4":
		return "# robots.txt — an explicit AI policy\nUser-agent: ChatGPT-User\nUser-agent: Claude-User\nUser-agent: Perplexity-User\nUser-agent: OAI-SearchBot\nUser-agent: Claude-SearchBot\nUser-agent: PerplexityBot\nAllow: /\n\n# Training crawlers: your choice\nUser-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n"
	case "1.15":
		return "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-input=yes, ai-train=no\n"
	case "4.2":
		return "User-agent: Google-Extended\nAllow: /\n"
	case "1.7":
		return fmt.Sprintf(`<meta name="llms:description" content="What %s offers, in one sentence.">`+"\n"+`<meta name="llms:url" content="%s/llms.txt">`, name, origin)
	case "1.16":
		return fmt.Sprintf(`{"linkset":[{"anchor":"%s/api","service-desc":[{"href":"%s/openapi.json","type":"application/vnd.oai.openapi+json"}],"service-doc":[{"href":"%s/docs","type":"text/html"}]}]}`, origin, origin, origin)
	case "1.2":
		return fmt.Sprintf(`{"name":"%s agent","description":"What the agent does.","version":"1.0.0","supportedInterfaces":[{"url":"%s/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["application/json"],"skills":[{"id":"main","name":"Main skill","description":"What it does.","tags":["%s"]}]}`, name, origin, name)
	case "1.12":
		return fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"%s/mcp","version":"1.0.0","description":"What the server offers.","remotes":[{"type":"streamable-http","url":"%s/mcp"}],"capabilities":{"tools":{}}}`, reverseDNS(u.Hostname()), origin)
	case "1.11":
		return fmt.Sprintf(`Link: <%s/.well-known/api-catalog>; rel="api-catalog", <%s/llms.txt>; rel="describedby"; type="text/markdown"`, origin, origin)
	case "4.8", "4.7":
		return fmt.Sprintf(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"%s","url":"%s/","logo":"%s/logo.png"}</script>`, name, origin, origin)
	case "4.4":
		return fmt.Sprintf("Sitemap: %s/sitemap.xml", origin)
	case "4.6":
		return `<meta name="viewport" content="width=device-width, initial-scale=1">`
	case "4.9":
		return fmt.Sprintf(`<link rel="canonical" href="%s/">`, origin)
	case "1.9":
		return fmt.Sprintf(`{"name":"%s","description":"What the site offers.","capabilities":["…"]}`, name)
	case "1.8":
		return fmt.Sprintf("---\nname: %s\ndescription: What agents can do on %s.\n---\n# %s\n\nHow to use the site or its API.\n", strings.ReplaceAll(name, ".", "-"), name, name)
	}
	return ""
}

func reverseDNS(host string) string {
	parts := strings.Split(strings.TrimPrefix(host, "www."), ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}
