package checks

import (
	"encoding/json"
	"strings"
	"testing"
)

// oldSnippets are the starters origin/mcpserver/snippets.go produced for
// https://www.acme.example:8443/ before they moved into the definitions:
// every check that had one still has it, byte for byte.
var oldSnippets = map[string]string{
	"1.1":  "# acme.example\n\n> One sentence: what acme.example offers and to whom.\n\n## Docs\n\n- [Getting started](https://www.acme.example:8443/docs/getting-started.md): first steps\n- [API reference](https://www.acme.example:8443/docs/api.md): endpoints and examples\n\n## Optional\n\n- [Changelog](https://www.acme.example:8443/changelog.md): recent changes\n",
	"1.2":  "{\"name\":\"acme.example agent\",\"description\":\"What the agent does.\",\"version\":\"1.0.0\",\"supportedInterfaces\":[{\"url\":\"https://www.acme.example:8443/a2a\",\"protocolBinding\":\"JSONRPC\",\"protocolVersion\":\"1.0\"}],\"capabilities\":{\"streaming\":false},\"defaultInputModes\":[\"text/plain\"],\"defaultOutputModes\":[\"application/json\"],\"skills\":[{\"id\":\"main\",\"name\":\"Main skill\",\"description\":\"What it does.\",\"tags\":[\"acme.example\"]}]}",
	"1.4":  "# robots.txt — an explicit AI policy\nUser-agent: ChatGPT-User\nUser-agent: Claude-User\nUser-agent: Perplexity-User\nUser-agent: OAI-SearchBot\nUser-agent: Claude-SearchBot\nUser-agent: PerplexityBot\nAllow: /\n\n# Training crawlers: your choice\nUser-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n",
	"1.7":  "<meta name=\"llms:description\" content=\"What acme.example offers, in one sentence.\">\n<meta name=\"llms:url\" content=\"https://www.acme.example:8443/llms.txt\">",
	"1.8":  "---\nname: acme-example\ndescription: What agents can do on acme.example.\n---\n# acme.example\n\nHow to use the site or its API.\n",
	"1.9":  "{\"name\":\"acme.example\",\"description\":\"What the site offers.\",\"capabilities\":[\"…\"]}",
	"1.11": "Link: <https://www.acme.example:8443/.well-known/api-catalog>; rel=\"api-catalog\", <https://www.acme.example:8443/llms.txt>; rel=\"describedby\"; type=\"text/markdown\"",
	"1.12": "{\"$schema\":\"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json\",\"name\":\"example.acme/mcp\",\"version\":\"1.0.0\",\"description\":\"What the server offers.\",\"remotes\":[{\"type\":\"streamable-http\",\"url\":\"https://www.acme.example:8443/mcp\"}],\"capabilities\":{\"tools\":{}}}",
	"1.15": "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-input=yes, ai-train=no\n",
	"1.16": "{\"linkset\":[{\"anchor\":\"https://www.acme.example:8443/api\",\"service-desc\":[{\"href\":\"https://www.acme.example:8443/openapi.json\",\"type\":\"application/vnd.oai.openapi+json\"}],\"service-doc\":[{\"href\":\"https://www.acme.example:8443/docs\",\"type\":\"text/html\"}]}]}",
	"4.2":  "User-agent: Google-Extended\nAllow: /\n",
	"4.4":  "Sitemap: https://www.acme.example:8443/sitemap.xml",
	"4.6":  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
	"4.7":  "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"Organization\",\"name\":\"acme.example\",\"url\":\"https://www.acme.example:8443/\",\"logo\":\"https://www.acme.example:8443/logo.png\"}</script>",
	"4.8":  "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"Organization\",\"name\":\"acme.example\",\"url\":\"https://www.acme.example:8443/\",\"logo\":\"https://www.acme.example:8443/logo.png\"}</script>",
	"4.9":  "<link rel=\"canonical\" href=\"https://www.acme.example:8443/\">",
}

func TestStartersKeptFromTheMCPSnippets(t *testing.T) {
	const site = "https://www.acme.example:8443/"
	for id, want := range oldSnippets {
		c, ok := ByID(id)
		if !ok {
			t.Fatalf("no check %s", id)
		}
		if got := c.Starter(site); got != want {
			t.Errorf("%s starter for %s:\n got %q\nwant %q", id, site, got, want)
		}
	}
}

// A filled-in starter names the site, leaves no placeholder behind, and is
// valid JSON when it is JSON; a starter that names the site has none for a
// site that is not an http(s) URL.
func TestStartersAreFilledIn(t *testing.T) {
	placeholders := []string{SiteOrigin, SiteName, SiteSlug, SiteReverse}
	n := 0
	for _, c := range All() {
		if c.Snippet == "" {
			if c.Starter("https://acme.example/") != "" {
				t.Errorf("%s: a starter without a snippet", c.ID)
			}
			continue
		}
		n++
		got := c.Starter("http://www.acme.example/")
		for _, p := range placeholders {
			if strings.Contains(got, p) {
				t.Errorf("%s: %s left in %q", c.ID, p, got)
			}
		}
		names := false
		for _, p := range placeholders {
			names = names || strings.Contains(c.Snippet, p)
		}
		if names {
			if !strings.Contains(got, "acme") {
				t.Errorf("%s: the site is not in %q", c.ID, got)
			}
			for _, bad := range []string{"", "acme.example", "/local/path", "ftp://acme.example/", "http://", "%zz"} {
				if s := c.Starter(bad); s != "" {
					t.Errorf("%s: starter for %q: %q", c.ID, bad, s)
				}
			}
		} else if got != c.Snippet {
			t.Errorf("%s: a snippet without placeholders changed: %q", c.ID, got)
		}
		if strings.HasPrefix(got, "{") && !json.Valid([]byte(got)) {
			t.Errorf("%s: the starter is not valid JSON: %s", c.ID, got)
		}
	}
	if n < len(oldSnippets)+1 {
		t.Errorf("%d checks have a starter", n)
	}
	mcp, _ := ByID("1.12")
	for site, name := range map[string]string{"https://www.shop.acme.example/": "example.acme.shop/mcp", "http://127.0.0.1:8080/": "127.0.0.1/mcp"} {
		if got := mcp.Starter(site); !strings.Contains(got, `"name":"`+name+`"`) {
			t.Errorf("1.12 name for %s: %s", site, got)
		}
	}
}

// Every check declares how much work its fix is; the catalog's JSON carries
// it and never the snippet template.
func TestEveryCheckHasAnEffort(t *testing.T) {
	seen := map[Effort]int{}
	for _, c := range All() {
		switch c.Effort {
		case Small, Medium, Large:
			seen[c.Effort]++
		default:
			t.Errorf("%s: effort %q", c.ID, c.Effort)
		}
	}
	if len(seen) != 3 {
		t.Errorf("efforts used: %v", seen)
	}
	c, _ := ByID("1.1")
	b, err := json.Marshal(c.Definition)
	if err != nil || !strings.Contains(string(b), `"effort":"small"`) || strings.Contains(string(b), "{origin}") || strings.Contains(string(b), "nippet") {
		t.Errorf("definition JSON: %s %v", b, err)
	}
	if Small.Rank() >= Medium.Rank() || Medium.Rank() >= Large.Rank() {
		t.Error("effort ranks out of order")
	}
}
