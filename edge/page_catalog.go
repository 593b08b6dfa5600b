package edge

import (
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Catalog is the check catalog as the edge embeds it (site/catalog.json,
// written by `make docs` from engine/checks, which the edge may not import).
type Catalog struct {
	Levels []CatalogLevel `json:"levels"`
	Checks []CatalogCheck `json:"checks"`
}

// CatalogLevel is one of the four levels of the web scan.
type CatalogLevel struct {
	Number      int    `json:"number"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// CatalogCheck is one check's definition.
type CatalogCheck struct {
	ID       string `json:"id"`
	Level    int    `json:"level"`
	Name     string `json:"name"`
	Category string `json:"category"`
	LooksFor string `json:"looksFor"`
	Rule     string `json:"rule"`
	Fix      string `json:"fix"`
	Effort   string `json:"effort"`
	Snippet  string `json:"snippet,omitempty"`
}

var catalog = sync.OnceValue(func() *Catalog {
	var c Catalog
	raw, _ := siteFS.ReadFile("site/catalog.json")
	json.Unmarshal(raw, &c)
	return &c
})

func (c *Catalog) check(id string) *CatalogCheck {
	for i := range c.Checks {
		if c.Checks[i].ID == id {
			return &c.Checks[i]
		}
	}
	return nil
}

// Starter fills a check's starter snippet in for site, as the engine's
// Definition.Starter does (a test holds the two to the same output for every
// snippet): {origin}, {name}, {slug} and {reverse}, in one pass, so a site's
// own spelling is never read as a placeholder.
func Starter(snippet, site string) string {
	if !strings.Contains(snippet, "{") {
		return snippet
	}
	u, err := url.Parse(site)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	name := strings.TrimPrefix(u.Hostname(), "www.")
	reverse := name
	if net.ParseIP(name) == nil {
		parts := strings.Split(name, ".")
		slices.Reverse(parts)
		reverse = strings.Join(parts, ".")
	}
	return strings.NewReplacer("{origin}", u.Scheme+"://"+u.Host, "{name}", name,
		"{slug}", strings.ReplaceAll(name, ".", "-"), "{reverse}", reverse).Replace(snippet)
}

func init() {
	siteDocs["/how-we-score"] = doc{file: "how-we-score.html", gen: scoringHTML, contentType: "text/html; charset=utf-8", maxAge: 3600}
	markdownTwins["/how-we-score"] = doc{file: "how-we-score.md", gen: scoringMarkdown, contentType: "text/markdown; charset=utf-8", maxAge: 3600}
}

// The scoring rules in words; engine/score and docs/scoring.md are the
// authority, and the self-scan reads this page like any other.
const scoringRules = `Every check ends pass, partial, fail or not applicable (what it grades does not exist on the site).
The score is 100 × (passes + half the partials) ÷ applicable checks over the 48 checks, rounded; grades are A from 90, B from 75, C from 60, D from 40, else F.
A level is reached when at least half of its applicable checks pass (level 1); level 2 also when level 1 is nearly there (35 %) and three quarters of level 2 pass; level 3 likewise on top of level 2.
Level 3 always requires level 1, and level 4 (Indexable) is scored beside the level, not inside it.`

func scoringMarkdown(base string, _ Config) []byte {
	var b strings.Builder
	cat := catalog()
	put(&b, "# How agentready scores a website\n\n")
	for _, line := range strings.Split(scoringRules, "\n") {
		put(&b, "- ", line, "\n")
	}
	put(&b, "\nThe full rules: ", base, "/docs. Scan a site: ", base, "/\n")
	for _, l := range cat.Levels {
		put(&b, "\n## Level ", strconv.Itoa(l.Number), " · ", l.Name, "\n\n", l.Description, "\n\n")
		for _, c := range cat.Checks {
			if c.Level == l.Number {
				put(&b, "- **", c.ID, " ", c.Name, "** (", c.Effort, " fix): ", mdLine(c.LooksFor), " ", mdLine(c.Rule), " Fix: ", mdLine(c.Fix), "\n")
			}
		}
	}
	return []byte(b.String())
}

func scoringHTML(base string, _ Config) []byte {
	var b strings.Builder
	cat := catalog()
	canonical := base + "/how-we-score"
	title := "How agentready scores a website"
	desc := "The 48 checks of the agentready scan in four levels, what each looks for, how its verdict is decided and how to fix it."
	pageHead(&b, title, desc, canonical, ldJSON(map[string]any{"@context": "https://schema.org", "@type": "TechArticle", "headline": title,
		"description": desc, "url": canonical, "isPartOf": map[string]string{"@type": "WebSite", "name": "agentready", "url": base + "/"}}))
	put(&b, `<main id="main">
<h1>`, title, `</h1>
<p>agentready runs `, strconv.Itoa(len(cat.Checks)), ` checks in `, strconv.Itoa(len(cat.Levels)), ` levels on a website's homepage and the documents it publishes for machines. This page is generated from the same check catalog as the scanner itself, so it always describes what the scan does.</p>
<h2>The rules</h2>
<ul>
`)
	for _, line := range strings.Split(scoringRules, "\n") {
		put(&b, "<li>", esc(line), "</li>\n")
	}
	put(&b, `</ul>
<p><a href="/">Scan a website</a> · <a href="/showcase">See the best-scoring sites</a> · <a href="/docs">Read the documentation</a></p>
`)
	for _, l := range cat.Levels {
		put(&b, `<section class="level" id="level-`, strconv.Itoa(l.Number), `">
<h2>Level `, strconv.Itoa(l.Number), ` · `, esc(l.Name), `</h2>
<p class="levdesc">`, esc(l.Description), `</p>
<ul class="list catalog">
`)
		for _, c := range cat.Checks {
			if c.Level != l.Number {
				continue
			}
			put(&b, `<li class="check" id="check-`, esc(c.ID), `"><details><summary><span class="cid">`, esc(c.ID), `</span> <span class="cn">`, esc(c.Name), `</span> <span class="msg">`, esc(c.Effort), ` fix</span></summary>
<div class="more">
<p><strong>Looks for:</strong> `, inlineCode(c.LooksFor), `</p>
<p><strong>Verdict:</strong> `, inlineCode(c.Rule), `</p>
<p><strong>Fix:</strong> `, inlineCode(c.Fix), `</p>
</div></details></li>
`)
		}
		put(&b, "</ul>\n</section>\n")
	}
	put(&b, `</main>
`, siteFooter, `</body>
</html>
`)
	return []byte(b.String())
}

// starterFor is the check's starter snippet filled in for site, or "".
func starterFor(id, site string) string {
	c := catalog().check(id)
	if c == nil || c.Snippet == "" {
		return ""
	}
	return Starter(c.Snippet, site)
}
