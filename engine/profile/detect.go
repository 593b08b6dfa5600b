package profile

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/declaration"
	"github.com/agentready/agentready/engine/report"
)

// KnownCheck reports whether a waiver may name id: one of the 48 web
// checks or a read check (R.1…).
func KnownCheck(id string) bool {
	if c, ok := checks.ByID(id); ok && c.WebScan {
		return true
	}
	_, ok := checks.ReadByID(id)
	return ok
}

// Detect reads what a scan gathered and judged, and says which kind of site
// it is, with the evidence in words, the site's own declaration and
// waivers. The first kind with evidence wins, in the order commerce, api,
// docs, application, content: a shop that also has an API is judged as a
// shop, an API's documentation site as the API, and a site with no
// evidence of anything else as content.
func Detect(set *gather.Set, res *report.Result) *report.Profile {
	p := &report.Profile{Waivers: []report.Waiver{}}
	has := func(k gather.AnyKey) bool { return gather.Has(set, k) }
	if has(gather.Declared) {
		if r := gather.Get(set, gather.Declared); r.Found() {
			d, err := declaration.Parse(r.Body, Known, KnownCheck)
			switch {
			case err == nil:
				p.Declared = d.Profile
				for _, w := range d.Waivers {
					p.Waivers = append(p.Waivers, report.Waiver{Check: w.Check, Reason: w.Reason, From: "site"})
				}
				p.DeclarationProblems = d.Problems
			default:
				// A file that is not a declaration declares nothing, and
				// says why. (A page there is not Found: a site answering
				// every path with a page says nothing.)
				p.DeclarationProblems = []string{err.Error()}
			}
		}
	}
	type kind struct {
		id       string
		evidence []string
	}
	var commerce, api, docs, app, content kind
	commerce.id, api.id, docs.id, app.id, content.id = "commerce", "api", "docs", "application", "content"

	for _, s := range res.Signals {
		if s.Group == report.GroupCommerce && (s.Status == report.Pass || s.Status == report.Partial) && s.ID != "mpp" {
			commerce.evidence = append(commerce.evidence, "it publishes a commerce document ("+s.Name+")")
		}
	}
	var home *gather.HomePage
	if has(gather.Home) {
		home = gather.Get(set, gather.Home)
	}
	if home != nil && home.JSONLD != nil {
		for _, n := range home.JSONLD.Nodes {
			for _, t := range n.Types {
				switch t {
				case "Product", "Offer", "AggregateOffer", "OnlineStore", "Store":
					commerce.evidence = appendOnce(commerce.evidence, "its homepage's JSON-LD has the type "+t)
				case "Article", "BlogPosting", "NewsArticle", "Blog":
					content.evidence = appendOnce(content.evidence, "its homepage's JSON-LD has the type "+t)
				case "TechArticle", "APIReference":
					docs.evidence = appendOnce(docs.evidence, "its homepage's JSON-LD has the type "+t)
				case "SoftwareApplication", "WebApplication":
					app.evidence = appendOnce(app.evidence, "its homepage's JSON-LD has the type "+t)
				}
			}
		}
	}
	if has(gather.Spec) {
		if d := gather.Get(set, gather.Spec); d != nil && d.Spec != nil {
			api.evidence = append(api.evidence, "it publishes an OpenAPI description")
		}
	}
	if has(gather.Catalog) {
		if d := gather.Get(set, gather.Catalog); d != nil && d.Linkset != nil && d.Resp.Found() {
			api.evidence = append(api.evidence, "it publishes an API catalog")
		}
	}
	if has(gather.MCPCard) {
		if d := gather.Get(set, gather.MCPCard); d != nil && d.Card != nil {
			api.evidence = append(api.evidence, "it publishes an MCP server card")
		}
	}
	host := strings.ToLower(set.Site.Target.Hostname())
	for _, prefix := range []string{"docs.", "developer.", "developers.", "dev.", "learn.", "help.", "support."} {
		if strings.HasPrefix(host, prefix) {
			docs.evidence = append(docs.evidence, "its host name starts with "+prefix)
		}
	}
	if has(gather.ReadSample) {
		doc := gather.Get(set, gather.ReadSample)
		all := distinctPages(doc.Sitemap, doc.LlmsLinks)
		if n := docsShare(all); len(all) >= 4 && n*2 >= len(all) {
			docs.evidence = append(docs.evidence, fmt.Sprintf("%d of the %d pages its sitemap and llms.txt list are documentation", n, len(all)))
		}
		if shells, html := checks.Shells(doc); html > 0 && shells*2 >= html {
			app.evidence = append(app.evidence, fmt.Sprintf("%d of %d sampled pages are application shells", shells, html))
		}
	}
	if home != nil && home.Page != nil {
		if home.Page.PasswordInputs > 0 {
			app.evidence = append(app.evidence, "its homepage is a sign-in form")
		} else if checks.ShellPage(home.Page) && len(app.evidence) == 0 {
			app.evidence = append(app.evidence, "its homepage is an application shell")
		}
	}
	if has(gather.Feed) {
		if d := gather.Get(set, gather.Feed); d != nil && d.Resp.Found() {
			content.evidence = append(content.evidence, "it publishes a feed")
		}
	}
	for _, k := range []kind{commerce, api, docs, app, content} {
		if len(k.evidence) > 0 {
			p.Detected, p.Evidence = k.id, k.evidence
			return p
		}
	}
	p.Detected, p.Evidence = "content", []string{"nothing marked it as a shop, an API, documentation or an application"}
	return p
}

// distinctPages lists each page once: a page in the sitemap and, as its
// .md twin, in llms.txt is one page.
func distinctPages(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, u := range l {
			if k := checks.NormalPage(u); !seen[k] {
				seen[k] = true
				out = append(out, u)
			}
		}
	}
	return out
}

func docsShare(urls []string) int {
	n := 0
	for _, raw := range urls {
		if gather.IsDocsURL(raw) {
			n++
		}
	}
	return n
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
