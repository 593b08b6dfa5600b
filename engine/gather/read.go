package gather

// The read suite's gatherers: a polite sample of the site's pages, each
// read the three ways an agent reads a page (as HTML, with Accept:
// text/markdown, and at its .md twin), one missing-page probe, and the
// site's own profile declaration. Their checks are in engine/checks/read.go.

import (
	"net/url"
	"path"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/llmstxt"
	"github.com/agentready/agentready/engine/parse/markdown"
	"github.com/agentready/agentready/engine/weburl"
)

// Read-suite keys.
var (
	ReadSample = NewKey[*ReadDoc]("read-sample")
	// Declared is the answer for the site's /.well-known/agentready.json
	// (docs/profiles.md). Package profile, which knows the profile and
	// check names it may use, reads it.
	Declared = NewKey[*fetch.Response]("declaration")
)

// DeclarationPath is where a site declares its profile and waivers.
const DeclarationPath = "/.well-known/agentready.json"

// DefaultReadPages is the read sample's size when Site.ReadPages is 0.
const DefaultReadPages = 10

// maxLlmsLinks bounds the llms.txt links read for sampling and coverage.
const maxLlmsLinks = 2000

// ReadDoc is what the read suite sampled.
type ReadDoc struct {
	Limit      int
	Source     string   // where the URLs came from, in words
	Candidates int      // distinct same-site pages found to choose from
	Sitemap    []string // the sitemap's page URLs (up to maxPageCandidates), for llms.txt coverage
	LlmsLinks  []string // llms.txt's same-site links, in order (up to maxLlmsLinks)
	Pages      []*ReadPage
	// Missing is the answer to a sibling of the first sampled page that
	// cannot exist (nil when nothing was sampled).
	Missing *fetch.Response
}

// ReadPage is one sampled page read three ways.
type ReadPage struct {
	URL  string // the page as HTML
	From string // "llms.txt", "sitemap" or "homepage links"
	// LlmsLink is the URL llms.txt listed for the page ("" when it came
	// from elsewhere): the page itself, or its .md twin.
	LlmsLink   string
	HTML       *fetch.Response
	Page       *htmlpage.Page // nil unless the answer was HTML
	Negotiated *fetch.Response
	TwinURL    string
	Twin       *fetch.Response
	// TwinDoc and NegotiatedDoc are those answers read as markdown (nil
	// unless the answer was a 2xx that is not HTML).
	TwinDoc, NegotiatedDoc *markdown.Doc
}

var declarationGatherer = Define(Declared, "GET "+DeclarationPath+": the site's own profile and waivers.", nil,
	func(c *Ctx) (*fetch.Response, error) {
		return c.Fetch(fetch.Request{URL: c.URL(DeclarationPath), Accept: acceptJSON, ReadSuite: true}), nil
	})

var readGatherer = Define(ReadSample, "Up to Site.ReadPages same-site pages (10 by default) from llms.txt and the sitemap, spread over sections; each as HTML, with Accept: text/markdown and at its .md twin; and a sibling of the first that cannot exist.",
	[]AnyKey{Home, Sitemap, Llms}, gatherRead)

func gatherRead(c *Ctx) (*ReadDoc, error) {
	limit := c.Site.ReadPages
	if limit == 0 {
		limit = DefaultReadPages
	}
	out := &ReadDoc{Limit: max(limit, 0)}
	if limit < 0 {
		return out, nil
	}
	home, sm, llms := Get(c, Home), Get(c, Sitemap), Get(c, Llms)
	read := []*fetch.Response{home.Resp, sm.Resp, llms.Resp}
	// The sitemap's pages: a urlset's, or the first same-site child of an index.
	if sm.Resp.OK() && !sm.Resp.LooksHTML() {
		index, locs := SitemapLocs(sm.Resp.Body, maxPageCandidates)
		if index {
			for _, l := range locs {
				if weburl.SameSite(c.Site.Target, l) {
					child := c.Fetch(fetch.Request{URL: l, Accept: acceptXML, Round: After(sm.Resp), ReadSuite: true})
					read = append(read, child)
					locs = nil
					if child.OK() {
						if childIndex, ls := SitemapLocs(child.Body, maxPageCandidates); !childIndex {
							locs = ls
						}
					}
					break
				}
			}
		}
		sitePages := newReadPicker(c.Site.Target, home.Resp)
		sitePages.add(locs...)
		out.Sitemap = sitePages.urls
	}
	// llms.txt's links: a .md link names the page's twin; its page is the
	// same path without .md.
	twinOf := map[string]string{}
	var fromLlms []string
	if llms.Resp.Found() {
		base, err := url.Parse(llms.Resp.FinalURL)
		if err != nil {
			base = c.Site.Target
		}
		pick := newReadPicker(c.Site.Target, home.Resp)
		for _, l := range llmstxt.Links(llms.Resp.Body, base, maxLlmsLinks) {
			if !pick.onSiteURL(l) {
				continue
			}
			l = withoutFragment(l)
			out.LlmsLinks = append(out.LlmsLinks, l)
			page := l
			if p := htmlOfTwin(l); p != "" {
				page = p
			}
			before := len(pick.urls)
			pick.add(page)
			if len(pick.urls) > before {
				twinOf[pick.urls[len(pick.urls)-1]] = l
			}
		}
		fromLlms = pick.urls
	}
	candidates := newReadPicker(c.Site.Target, home.Resp)
	candidates.add(fromLlms...)
	candidates.add(out.Sitemap...)
	source := sourceWords(len(fromLlms) > 0, len(out.Sitemap) > 0)
	if len(candidates.urls) == 0 && home.Page != nil {
		candidates = newPagePicker(c.Site.Target, home.Resp)
		candidates.addLinks(home.Page)
		if len(candidates.urls) > 0 {
			source = "homepage links"
		}
	}
	out.Candidates, out.Source = len(candidates.urls), source
	sample := spreadSections(interleave(fromLlms, out.Sitemap, candidates.urls), limit)
	if len(sample) == 0 {
		return out, nil
	}
	inLlms := map[string]bool{}
	for _, u := range fromLlms {
		inLlms[u] = true
	}
	round := After(read...)
	var reqs []fetch.Request
	for _, u := range sample {
		p := &ReadPage{URL: u, From: "sitemap", TwinURL: TwinURL(u)}
		switch {
		case inLlms[u]:
			p.From, p.LlmsLink = "llms.txt", u
			if t := twinOf[u]; t != "" && htmlOfTwin(t) != "" {
				// A .md link is the page's twin as llms.txt spells it.
				p.LlmsLink, p.TwinURL = t, t
			}
		case source == "homepage links":
			p.From = "homepage links"
		}
		out.Pages = append(out.Pages, p)
		reqs = append(reqs,
			fetch.Request{URL: u, Accept: AcceptHTML, Round: round, ReadSuite: true},
			fetch.Request{URL: u, Accept: AcceptMarkdown, Round: round, ReadSuite: true},
			fetch.Request{URL: p.TwinURL, Accept: AcceptMarkdown, Round: round, ReadSuite: true})
	}
	missing := missingSibling(sample[0])
	reqs = append(reqs, fetch.Request{URL: missing, Accept: AcceptHTML, Round: round, ReadSuite: true})
	got := c.FetchAll(reqs)
	for i, p := range out.Pages {
		p.HTML, p.Negotiated, p.Twin = got[3*i], got[3*i+1], got[3*i+2]
		p.TwinDoc, p.NegotiatedDoc = markdownOf(p.Twin), markdownOf(p.Negotiated)
		if p.HTML.LooksHTML() {
			base, err := url.Parse(p.HTML.FinalURL)
			if err != nil {
				base = c.Site.Target
			}
			p.Page = htmlpage.Parse(p.HTML.Body, base)
		}
	}
	out.Missing = got[len(got)-1]
	return out, nil
}

// newReadPicker is a page picker that keeps the homepage when a list names
// it: agents that follow llms.txt or the sitemap read it like any page,
// and its HTML and markdown answers are the ones the scan already has.
func newReadPicker(target *url.URL, home *fetch.Response) *pagePicker {
	p := newPagePicker(target, home)
	p.home = map[string]bool{}
	return p
}

func markdownOf(r *fetch.Response) *markdown.Doc {
	if !r.OK() || r.LooksHTML() || len(r.Body) == 0 {
		return nil
	}
	return markdown.Parse(r.Body)
}

func sourceWords(llms, sitemap bool) string {
	switch {
	case llms && sitemap:
		return "llms.txt and the sitemap"
	case llms:
		return "llms.txt"
	case sitemap:
		return "the sitemap"
	}
	return ""
}

// onSiteURL reports whether raw is an http(s) URL on the scanned site.
func (p *pagePicker) onSiteURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && p.onSite(u)
}

func withoutFragment(raw string) string {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		return raw[:i]
	}
	return raw
}

// TwinURL is where a page's markdown twin lives by the llms.txt
// convention: the path with .md appended, index.md for a directory.
func TwinURL(page string) string {
	u, err := url.Parse(page)
	if err != nil {
		return page + ".md"
	}
	// The escaped path keeps an escaped slash (/pkg/a%2Fb) one segment.
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	switch {
	case p == "" || strings.HasSuffix(p, "/"):
		p += "index.md"
	case strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".htm"):
		p = strings.TrimSuffix(strings.TrimSuffix(p, ".html"), ".htm") + ".md"
	default:
		p += ".md"
	}
	twin, err := url.Parse(u.Scheme + "://" + u.Host + p)
	if err != nil {
		return page + ".md"
	}
	return twin.String()
}

// htmlOfTwin is the page a .md URL is the twin of ("" when raw does not
// end in .md): /docs/intro.md is /docs/intro, /docs/index.md is /docs/.
func htmlOfTwin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasSuffix(strings.ToLower(u.Path), ".md") {
		return ""
	}
	p := u.Path[:len(u.Path)-3]
	if path.Base(p) == "index" {
		p = strings.TrimSuffix(p, "index")
	}
	u.Path, u.RawPath = p, ""
	return u.String()
}

// MissingPagePrefix starts the random suffix of the read suite's
// missing-page probe (R.8).
const MissingPagePrefix = "agentready-missing-"

// missingSibling is a URL beside page that cannot exist: its path with a
// random suffix, so a site cannot recognise it.
func missingSibling(page string) string {
	u, err := url.Parse(page)
	if err != nil {
		return page
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "-" + randomSegment(MissingPagePrefix)
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String()
}

// interleave takes from a and b in turn, then the rest of all, keeping
// each URL once: the sample mixes what llms.txt and the sitemap list.
func interleave(a, b, all []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(u string) {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for i := 0; i < max(len(a), len(b)); i++ {
		if i < len(a) {
			add(a[i])
		}
		if i < len(b) {
			add(b[i])
		}
	}
	for _, u := range all {
		add(u)
	}
	return out
}

// spreadSections picks n URLs round-robin over their first path segment
// (the site's sections), in the order each section first appears, so ten
// pages of a site with a large /blog still reach /docs and /pricing.
func spreadSections(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	var order []string
	groups := map[string][]string{}
	for _, raw := range list {
		sec := ""
		if u, err := url.Parse(raw); err == nil {
			sec, _, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		}
		if _, ok := groups[sec]; !ok {
			order = append(order, sec)
		}
		groups[sec] = append(groups[sec], raw)
	}
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		for _, sec := range order {
			if g := groups[sec]; i < len(g) && len(out) < n {
				out = append(out, g[i])
			}
		}
	}
	return out
}
