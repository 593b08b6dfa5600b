package checks

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/jsonld"
)

func init() {
	register(Definition{ID: "4.1", Level: 4, Name: "Googlebot Allowed", Effort: Small, LooksFor: "The RFC 9309 effective robots.txt rule for Googlebot on /.",
		Rule: "pass: allowed (including when there is no robots.txt). fail: disallowed, or robots.txt answers 5xx or not at all.",
		Fix:  "Allow Googlebot to crawl /: remove `Disallow: /` from the groups that apply to it."}, needs(gather.Robots), googlebot)
	register(Definition{ID: "4.2", Level: 4, Name: "Google-Extended Policy", Effort: Small, LooksFor: "robots.txt groups naming Google-Extended.",
		Rule:    "pass: a group naming Google-Extended (any policy). fail: none.",
		Snippet: "User-agent: Google-Extended\nAllow: /\n",
		Fix:     "Decide whether Gemini may train on and ground in your content, and say so: `User-agent: Google-Extended` then `Allow: /` or `Disallow: /`."}, needs(gather.Robots), googleExtended)
	register(Definition{ID: "4.3", Level: 4, Name: "Homepage Indexable", Effort: Small, LooksFor: "X-Robots-Tag headers (generic or googlebot-scoped) and <meta name=\"robots\"> / <meta name=\"googlebot\">.",
		Rule: "pass: no noindex. partial: nosnippet or max-snippet:0 (blocks grounding). fail: noindex (or none).",
		Fix:  "Remove `noindex` (and `nosnippet`) from the homepage's X-Robots-Tag header and robots meta tag."}, needs(gather.Home), indexable)
	register(Definition{ID: "4.4", Level: 4, Name: "Sitemap Present", Effort: Small, LooksFor: "Sitemap: lines in robots.txt (relative URLs resolved against robots.txt), else /sitemap.xml.",
		Rule:    "pass: robots.txt declares a sitemap and it parses (urlset or sitemapindex). partial: a valid /sitemap.xml not declared in robots.txt, or a declared sitemap that is unreachable or invalid. fail: none.",
		Snippet: "Sitemap: {origin}/sitemap.xml",
		Fix:     "Publish /sitemap.xml and declare it in robots.txt: `Sitemap: https://example.com/sitemap.xml`."}, needs(gather.Sitemap, gather.Robots), sitemap)
	register(Definition{ID: "4.5", Level: 4, Name: "HTTPS", Effort: Medium, LooksFor: "The scanned URL's scheme and, for https sites, the http:// homepage (redirects not followed).",
		Rule: "pass: served over https, and http:// redirects (301/308) to https on the same host. partial: https, but http serves content, redirects with 302/307 or elsewhere, or does not answer. fail: http only.",
		Fix:  "Serve the site over https and redirect http:// permanently (301) to the same URL on https."}, needs(gather.HTTPTwin), https)
	register(Definition{ID: "4.6", Level: 4, Name: "Mobile Viewport", Effort: Small, LooksFor: "<meta name=\"viewport\">.",
		Rule:    "pass: width=device-width. partial: it also disables zoom (user-scalable=no or maximum-scale=1). fail: none.",
		Snippet: `<meta name="viewport" content="width=device-width, initial-scale=1">`,
		Fix:     "Add `<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">`."}, needs(gather.Home), viewport)
	register(Definition{ID: "4.7", Level: 4, Name: "JSON-LD Present", Effort: Medium, LooksFor: "<script type=\"application/ld+json\"> blocks on the homepage.",
		Rule:    "pass: at least one block that parses. partial: blocks exist but none parses. fail: none.",
		Snippet: starterOrganization,
		Fix:     "Describe the page with schema.org JSON-LD in a `<script type=\"application/ld+json\">` block."}, needs(gather.Home), jsonLDPresent)
	register(Definition{ID: "4.8", Level: 4, Name: "Entity Schema", Effort: Medium, LooksFor: "The whole JSON-LD graph (nested nodes, @graph).",
		Rule:    "pass: an Organization, WebSite or LocalBusiness node (or a schema.org subtype such as Corporation or OnlineStore) with name and url. partial: such a node without name or url. fail: none.",
		Snippet: starterOrganization,
		Fix:     "Add an Organization (or WebSite) node with `name`, `url`, `logo` and `sameAs` to the homepage's JSON-LD."}, needs(gather.Home), entitySchema)
	register(Definition{ID: "4.9", Level: 4, Name: "Canonical URL", Effort: Small, LooksFor: "The first <link rel=\"canonical\"> (rel read as a token list).",
		Rule:    "pass: resolves to this origin's root. partial: another path, another host (www vs apex included), or unparsable. fail: none.",
		Snippet: `<link rel="canonical" href="{origin}/">`,
		Fix:     "Add `<link rel=\"canonical\" href=\"https://example.com/\">` naming the homepage's own URL."}, needs(gather.Home), canonical)
	register(Definition{ID: "4.10", Level: 4, Name: "Heading Hierarchy", Effort: Medium, LooksFor: "Headings of the parsed DOM.",
		Rule: "Issues: not exactly one h1; no h2; a level skipped within the first 20 headings. pass: no issue. partial: one. fail: two or more.",
		Fix:  "Use one h1 for the page's subject, h2 for its sections, and never skip a level."}, needs(gather.Home), headings)
	register(Definition{ID: "4.11", Level: 4, Name: "Image Alt Coverage", Effort: Medium, LooksFor: "<img> elements and their alt attributes (empty alt allowed for decoration).",
		Rule: "share with alt: pass ≥ 0.8, partial ≥ 0.5, fail below. na: no images.",
		Fix:  "Give every meaningful image an alt text, and decorative ones `alt=\"\"`."}, needs(gather.Home), imageAlt)
	register(Definition{ID: "4.12", Level: 4, Name: "Substantive Content", Effort: Large, LooksFor: "Words of main content after dropping nav, header, footer, aside, script, style, svg, noscript, template (Chinese and Japanese text counted at two characters a word).",
		Rule: "pass ≥ 300 words, partial ≥ 150, fail below.",
		Fix:  "Put real, server-rendered text on the homepage: what you offer, for whom, and how to use it."}, needs(gather.Home), substantive)
}

// starterOrganization is the JSON-LD block 4.7 and 4.8 both ask for.
const starterOrganization = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization",` +
	`"name":"{name}","url":"{origin}/","logo":"{origin}/logo.png"}</script>`

var maxSnippetZero = regexp.MustCompile(`max-snippet\s*:\s*0\b`)

// indexRule is one robots directive that limits what search engines do
// with a page, and where the page said it.
type indexRule struct {
	where     string // X-Robots-Tag, X-Robots-Tag (googlebot), <meta name="robots"> or <meta name="googlebot">
	directive string // noindex, none, nosnippet or max-snippet:0, as written (lower case)
}

func (r indexRule) String() string { return r.where + ": " + r.directive }

// indexRules reads what a page's X-Robots-Tag headers and robots meta tags
// (robots and googlebot) say about Google indexing it: noindex (or none)
// keeps it out of the index, nosnippet (or max-snippet:0) keeps answers from
// quoting it. A header value scoped to a bot ("otherbot: noindex") counts
// only for googlebot. 4.3 judges the homepage with it, pages.sample every
// sampled page.
func indexRules(header http.Header, metas []htmlpage.Meta) (noindex, nosnippet []indexRule) {
	scan := func(where, v string) {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			switch {
			case d == "noindex" || d == "none":
				noindex = append(noindex, indexRule{where, d})
			case d == "nosnippet" || maxSnippetZero.MatchString(d):
				nosnippet = append(nosnippet, indexRule{where, d})
			}
		}
	}
	for _, v := range header.Values("X-Robots-Tag") {
		l := strings.ToLower(strings.TrimSpace(v))
		if bot, rest, scoped := xRobotsScope(l); !scoped {
			scan("X-Robots-Tag", l)
		} else if bot == "googlebot" {
			scan("X-Robots-Tag ("+bot+")", rest)
		}
	}
	for _, m := range metas {
		if m.Name == "robots" || m.Name == "googlebot" {
			scan("<meta name=\""+m.Name+"\">", strings.ToLower(m.Content))
		}
	}
	return noindex, nosnippet
}

// xRobotsScope splits a lower-cased X-Robots-Tag value scoped to one bot
// ("googlebot: noindex") into the bot and its directives. A directive that
// takes a value (max-snippet: 0, unavailable_after: …) is not a scope.
func xRobotsScope(l string) (bot, rest string, scoped bool) {
	i := strings.Index(l, ":")
	if i <= 0 {
		return "", l, false
	}
	bot = strings.TrimSpace(l[:i])
	switch {
	case strings.ContainsAny(bot, " ,"), bot == "max-snippet", bot == "max-image-preview", bot == "max-video-preview", bot == "unavailable_after":
		return "", l, false
	}
	return bot, l[i+1:], true
}

func indexable(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	var metas []htmlpage.Meta
	if h.Page != nil {
		metas = h.Page.Metas
	}
	noindexRules, nosnippetRules := indexRules(h.Resp.Header, metas)
	noindex, nosnippet := ruleStrings(noindexRules), ruleStrings(nosnippetRules)
	det := map[string]any{"noindex": noindex, "nosnippet": nosnippet}
	switch {
	case len(noindex) > 0:
		return Outcome{Status: "fail", Message: "The homepage asks search engines not to index it (" + noindex[0] + ").", Details: det, FoundAt: at(h.Resp)}
	case len(nosnippet) > 0:
		return partial("The homepage may be indexed but forbids snippets ("+nosnippet[0]+"), so AI answers cannot quote it.", "Remove `nosnippet` / `max-snippet:0` so answers can ground on your text.", det, at(h.Resp))
	}
	return pass("Nothing stops search engines from indexing the homepage"+homeNote(h)+".", nil, at(h.Resp))
}

func ruleStrings(rules []indexRule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

func https(in gather.Source) Outcome {
	target, r := gather.SiteOf(in).Target, gather.Get(in, gather.HTTPTwin)
	if target.Scheme != "https" {
		return fail("The site was scanned over plain http.", "Serve the site over https (and scan the https URL); agents and browsers treat http as unsafe.", nil)
	}
	if r == nil || r.Err != nil {
		return partial("The site is served over https, but http:// does not answer, so links and typed URLs with http:// fail instead of redirecting.", "Listen on port 80 and redirect every request (301) to https.", map[string]string{"http": absence(r)}, "")
	}
	loc := r.Header.Get("Location")
	det := map[string]any{"httpStatus": r.Status, "location": loc}
	twin, _ := url.Parse(r.RequestURL)
	toHTTPS := false
	if u, err := twin.Parse(loc); err == nil && loc != "" {
		toHTTPS = u.Scheme == "https" && strings.EqualFold(u.Hostname(), target.Hostname())
	}
	switch {
	case (r.Status == 301 || r.Status == 308) && toHTTPS:
		return pass(fmt.Sprintf("https, and http:// redirects permanently (%d) to https.", r.Status), det, r.RequestURL)
	case (r.Status == 302 || r.Status == 307) && toHTTPS:
		return partial(fmt.Sprintf("http:// redirects to https with a temporary %d.", r.Status), "Use a permanent 301 or 308 redirect.", det, r.RequestURL)
	case r.Status >= 300 && r.Status < 400:
		return partial("http:// redirects, but not to https on the same host ("+loc+").", "", det, r.RequestURL)
	case r.Status >= 200 && r.Status < 300:
		return partial("http:// serves content instead of redirecting to https.", "", det, r.RequestURL)
	}
	return partial(fmt.Sprintf("http:// answers %d instead of redirecting to https.", r.Status), "", det, r.RequestURL)
}

var noZoom = regexp.MustCompile(`user-scalable\s*=\s*(no|0)|maximum-scale\s*=\s*1(\.0+)?\b`)

func viewport(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	v, ok := h.Page.MetaNamed("viewport")
	l := strings.ToLower(strings.ReplaceAll(v, " ", ""))
	switch {
	case !ok || !strings.Contains(l, "width=device-width"):
		return fail("The homepage has no viewport meta tag with width=device-width"+homeNote(h)+".", "", map[string]string{"viewport": v})
	case noZoom.MatchString(l):
		return partial("The viewport disables zooming ("+v+").", "Drop `user-scalable=no` and `maximum-scale=1`; they break accessibility.", map[string]string{"viewport": v}, at(h.Resp))
	}
	return pass("The homepage sets a responsive viewport.", map[string]string{"viewport": v}, at(h.Resp))
}

func jsonLDPresent(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	g := h.JSONLD
	switch {
	case g.Blocks == 0:
		return fail("The homepage has no JSON-LD structured data"+homeNote(h)+".", "", nil)
	case g.Parsed == 0:
		return partial(fmt.Sprintf("The homepage has %s, but none parses.", plural(g.Blocks, "JSON-LD block", "JSON-LD blocks")), "Fix the JSON syntax errors listed in details.", map[string]any{"errors": g.Errors}, at(h.Resp))
	}
	types := map[string]bool{}
	for _, n := range g.Nodes {
		for _, t := range n.Types {
			types[t] = true
		}
	}
	var ts []string
	for t := range types {
		ts = append(ts, t)
	}
	return pass(fmt.Sprintf("%d of %d JSON-LD blocks parse.", g.Parsed, g.Blocks), map[string]any{"types": sortStrings(ts), "errors": g.Errors}, at(h.Resp))
}

func entitySchema(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	ents := h.JSONLD.Entities()
	var incomplete *jsonld.Node
	for i, n := range ents {
		if n.Str("name") != "" && n.Str("url") != "" {
			return pass(fmt.Sprintf("JSON-LD describes %s %s, %q (%s).", article(n.Types[0]), n.Types[0], n.Str("name"), n.Str("url")), map[string]any{"type": n.Types, "name": n.Str("name"), "url": n.Str("url")}, at(h.Resp))
		}
		if incomplete == nil {
			incomplete = &ents[i]
		}
	}
	if incomplete != nil {
		return partial(fmt.Sprintf("JSON-LD has %s %s node without name or url.", article(incomplete.Types[0]), incomplete.Types[0]), "Give the entity both `name` and `url`.", map[string]any{"type": incomplete.Types}, at(h.Resp))
	}
	return fail("JSON-LD names no Organization, WebSite or LocalBusiness entity"+homeNote(h)+".", "", nil)
}

func canonical(in gather.Source) Outcome {
	h, target := gather.Get(in, gather.Home), gather.SiteOf(in).Target
	if h.Page == nil {
		return noPage(h)
	}
	for _, l := range h.Page.Links {
		if !l.HasRel("canonical") {
			continue
		}
		u, err := url.Parse(l.Href)
		if l.Href == "" || err != nil || !u.IsAbs() {
			return partial("The canonical link is empty or not a URL.", "", map[string]string{"href": l.Href}, at(h.Resp))
		}
		det := map[string]string{"canonical": l.Href}
		switch {
		case u.Scheme == target.Scheme && strings.EqualFold(u.Host, target.Host) && (u.Path == "" || u.Path == "/") && u.RawQuery == "":
			return pass("The homepage names itself as canonical ("+l.Href+").", det, at(h.Resp))
		case !strings.EqualFold(u.Hostname(), target.Hostname()):
			return partial("The canonical URL points to another host ("+u.Host+"); agents may attribute the page elsewhere.", "Point the canonical link at this host, or scan the canonical host.", det, at(h.Resp))
		}
		return partial("The canonical URL is not this site's root ("+l.Href+").", "", det, at(h.Resp))
	}
	return fail("The homepage has no <link rel=\"canonical\">"+homeNote(h)+".", "", nil)
}

func headings(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	hs := h.Page.Headings
	var issues []string
	h1, h2 := 0, 0
	for _, h := range hs {
		switch h.Level {
		case 1:
			h1++
		case 2:
			h2++
		}
	}
	if h1 != 1 {
		issues = append(issues, fmt.Sprintf("%d h1 headings (want exactly one)", h1))
	}
	if h2 == 0 {
		issues = append(issues, "no h2")
	}
	for i := 1; i < len(hs) && i < 20; i++ {
		if hs[i].Level > hs[i-1].Level+1 {
			issues = append(issues, fmt.Sprintf("h%d follows h%d (%q)", hs[i].Level, hs[i-1].Level, hs[i].Text))
			break
		}
	}
	det := map[string]any{"headings": len(hs), "h1": h1, "h2": h2, "issues": issues}
	switch len(issues) {
	case 0:
		return pass(fmt.Sprintf("Headings form a clean outline (one h1, %s).", plural(h2, "h2", "h2s")), det, at(h.Resp))
	case 1:
		return partial("The heading outline has one issue: "+issues[0]+".", "", det, at(h.Resp))
	}
	return fail("The heading outline has issues: "+strings.Join(issues, "; ")+homeNote(h)+".", "", det)
}

func imageAlt(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil || h.Page.Images == 0 {
		return na("The homepage has no images.")
	}
	p := h.Page
	ratio := float64(p.ImagesWithAlt) / float64(p.Images)
	verb := "have"
	if p.Images == 1 {
		verb = "has"
	}
	msg := fmt.Sprintf("%d of %s %s an alt attribute", p.ImagesWithAlt, plural(p.Images, "image", "images"), verb)
	det := map[string]int{"images": p.Images, "withAlt": p.ImagesWithAlt}
	switch {
	case ratio >= 0.8:
		return pass(msg+".", det, at(h.Resp))
	case ratio >= 0.5:
		return partial(msg+".", "", det, at(h.Resp))
	}
	return fail(msg+".", "", det)
}

func substantive(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	n := h.Page.MainWords
	det := map[string]int{"words": n}
	msg := fmt.Sprintf("The homepage's main content has %s", plural(n, "word", "words"))
	switch {
	case n >= 300:
		return pass(msg+".", det, at(h.Resp))
	case n >= 150:
		return partial(msg+" (300 make a substantive page).", "", det, at(h.Resp))
	}
	return fail(msg+homeNote(h)+" (300 make a substantive page).", "", det)
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}
