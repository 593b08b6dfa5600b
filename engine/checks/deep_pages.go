package checks

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

var _ = deepProbe(&DeepProbe{
	ID:   "pages.sample",
	Name: "Pages beyond the homepage",
	Doc: "Up to 20 same-origin pages from the sitemap (or the homepage's links), each judged like the homepage: indexable (200, HTML, no noindex, " +
		"not blocked by robots.txt, not the homepage again), markdown on request (Accept: text/markdown → text/markdown with Vary: Accept), " +
		"a parseable JSON-LD block, exactly one h1. pass: at least 80% of the pages have all four. partial: some do. fail: none. na: no page beyond the homepage.",
	Requires: []gather.AnyKey{gather.Pages, gather.Robots},
	Run:      samplePages,
})

// A page problem's kind, in the order ties are broken when naming the most
// common one, with what fixes it.
var pageProblemFix = []struct{ kind, fix string }{
	{"unreachable", "Make every listed page answer within a few seconds."},
	{"status", "List only live pages (200) in the sitemap, and fix or redirect the ones that break."},
	{"nothtml", "Serve pages as text/html."},
	{"soft404", "Answer unknown paths with 404 instead of the homepage, and list only real pages."},
	{"noindex", "Remove noindex from the pages agents and search engines should find, or drop them from the sitemap."},
	{"robots", "Allow these paths in robots.txt, or drop them from the sitemap."},
	{"markdown", "Answer Accept: text/markdown on every page with a markdown rendering, Content-Type: text/markdown and Vary: Accept."},
	{"jsonld", "Describe each page with a schema.org JSON-LD block (WebPage, Article, Product…)."},
	{"h1", "Give each page exactly one h1 naming its subject."},
}

// pageProblem is one way a page falls short. Its text follows a count of
// pages ("12 of 20 pages answered 404") as well as it follows one page's
// URL, so it is worded in the past tense.
type pageProblem struct{ kind, text string }

// maxProblemWordings bounds the wordings of one kind of problem a message
// spells out; the rest are counted together.
const maxProblemWordings = 4

// pageResult is one sampled page in the details.
type pageResult struct {
	URL            string   `json:"url"`
	Status         int      `json:"status"`
	Indexable      bool     `json:"indexable"`
	Markdown       bool     `json:"markdown"`
	StructuredData bool     `json:"structuredData"`
	Headings       bool     `json:"headings"`
	Problems       []string `json:"problems,omitempty"`
	// JSONLDErrors says, in words, why each JSON-LD block that does not
	// parse fails (also on a page where another block parses).
	JSONLDErrors []string `json:"jsonLdErrors,omitempty"`
}

func samplePages(in gather.Source) report.DeepProbe {
	doc, rb := gather.Get(in, gather.Pages), gather.Get(in, gather.Robots)
	offOrigin := ""
	if doc.OffOrigin > 0 {
		offOrigin = fmt.Sprintf(" %s on other origins %s not sampled.", plural(doc.OffOrigin, "URL", "URLs"), map[bool]string{true: "was", false: "were"}[doc.OffOrigin == 1])
	}
	if len(doc.Pages) == 0 {
		where := "The homepage links to no other page of this origin and there is no usable sitemap"
		if doc.SitemapURL != "" {
			where = "Neither the sitemap (" + doc.SitemapURL + ") nor the homepage's links name another HTML page of this origin"
		}
		return report.DeepProbe{Status: report.NA, Message: where + ", so no page beyond the homepage was tried." + offOrigin,
			Details: map[string]any{"sitemap": doc.SitemapURL, "skippedOffOrigin": doc.OffOrigin, "skippedAssets": doc.Assets}}
	}
	var results []pageResult
	tallies := map[string]*problemTally{}
	passed := 0
	for _, p := range doc.Pages {
		res, probs := judgePage(p, rb)
		seen := map[string]bool{}
		for _, pr := range probs {
			res.Problems = append(res.Problems, pr.text)
			if !seen[pr.kind] {
				// A page counts once per kind, under its first wording.
				seen[pr.kind] = true
				if tallies[pr.kind] == nil {
					tallies[pr.kind] = &problemTally{}
				}
				tallies[pr.kind].add(pr.text, p.URL)
			}
		}
		if len(probs) == 0 {
			passed++
		}
		results = append(results, res)
	}
	n := len(doc.Pages)
	from := doc.Source
	if doc.Source != "homepage links" {
		from = doc.Source + " " + doc.SitemapURL
	}
	msg := fmt.Sprintf("%d of %d pages pass (sampled from the %s).", passed, n, from)
	det := map[string]any{"source": doc.Source, "sampled": n, "passed": passed, "candidates": doc.Candidates,
		"skippedOffOrigin": doc.OffOrigin, "skippedAssets": doc.Assets, "pages": results}
	if doc.SitemapURL != "" {
		det["sitemap"] = doc.SitemapURL
	}
	if len(doc.Children) > 0 {
		det["childSitemaps"] = doc.Children
	}
	if passed == n {
		return report.DeepProbe{Status: report.Pass, Message: msg + " Each is indexable, answers Accept: text/markdown with markdown, carries parseable JSON-LD and has one h1." + offOrigin, Details: det}
	}
	// Kinds by the pages they affect, ties in pageProblemFix order: the
	// first is the most common problem, named with examples and its fix.
	var kinds []string
	fix := map[string]string{}
	for _, k := range pageProblemFix {
		if tallies[k.kind] != nil {
			kinds = append(kinds, k.kind)
			fix[k.kind] = k.fix
		}
	}
	sort.SliceStable(kinds, func(i, j int) bool { return tallies[kinds[i]].pages > tallies[kinds[j]].pages })
	msg += " Most common problem: " + tallies[kinds[0]].summary(n, true) + ". " + fix[kinds[0]]
	if len(kinds) > 1 {
		var also []string
		for _, k := range kinds[1:] {
			also = append(also, tallies[k].summary(n, false))
		}
		msg += " Also: " + strings.Join(also, "; ") + ". Each page's problems are listed in the details."
	}
	st := report.Fail
	switch {
	case passed*5 >= n*4:
		st = report.Pass
	case passed > 0:
		st = report.Partial
	}
	return report.DeepProbe{Status: st, Message: msg + offOrigin, Details: det}
}

// problemTally counts the pages with one kind of problem, by wording, in the
// order the wordings were first seen, with the first page of each.
type problemTally struct {
	pages    int
	wordings []problemWording
}

type problemWording struct {
	text, example string
	pages         int
}

func (t *problemTally) add(text, url string) {
	t.pages++
	for i := range t.wordings {
		if t.wordings[i].text == text {
			t.wordings[i].pages++
			return
		}
	}
	t.wordings = append(t.wordings, problemWording{text: text, example: url, pages: 1})
}

// summary counts each wording truly, the most frequent first: "12 of 20
// pages answered 404 and 4 answered 410", with an example page for each
// when examples is set. Wordings beyond maxProblemWordings are counted
// together.
func (t *problemTally) summary(sampled int, examples bool) string {
	ws := slices.Clone(t.wordings)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].pages > ws[j].pages })
	rest := 0
	if len(ws) > maxProblemWordings {
		for _, w := range ws[maxProblemWordings:] {
			rest += w.pages
		}
		ws = ws[:maxProblemWordings]
	}
	var parts []string
	for i, w := range ws {
		part := fmt.Sprintf("%d %s", w.pages, w.text)
		if i == 0 {
			part = fmt.Sprintf("%d of %d pages %s", w.pages, sampled, w.text)
		}
		if examples {
			part += " (e.g. " + clip.To(w.example, 120) + ")"
		}
		parts = append(parts, part)
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%d in other ways", rest))
	}
	return joinAnd(parts)
}

// judgePage applies the homepage's rules to one page. A page that did not
// answer 200 with HTML has that as its only problem: the rest follows from it.
func judgePage(p *gather.PageSample, rb *gather.RobotsTxt) (pageResult, []pageProblem) {
	r := p.Resp
	res := pageResult{URL: p.URL, Status: r.Status}
	var probs []pageProblem
	add := func(kind, format string, a ...any) {
		probs = append(probs, pageProblem{kind, fmt.Sprintf(format, a...)})
	}
	switch {
	case r.Err != nil:
		add("unreachable", "did not answer (%s)", fetch.Describe(r.Err))
		return res, probs
	case r.Status != 200:
		add("status", "answered %d", r.Status)
		return res, probs
	case !p.HTML:
		add("nothtml", "answered %s, not HTML", clip.To(orUnknown(r.ContentType()), 60))
		return res, probs
	}
	res.Indexable = true
	if p.SameAsHome {
		res.Indexable = false
		add("soft404", "served the homepage's HTML (a soft 404)")
	}
	if noindex, _ := indexRules(r.Header, p.RobotsMeta); len(noindex) > 0 {
		res.Indexable = false
		d := noindex[0].directive
		if d == "none" {
			d = "none (noindex, nofollow)"
		}
		var where []string
		for _, n := range noindex {
			if !slices.Contains(where, n.where) {
				where = append(where, n.where)
			}
		}
		add("noindex", "set %s in %s", d, joinAnd(where))
	}
	if rb.File != nil {
		if u, err := url.Parse(p.URL); err == nil {
			target := u.EscapedPath()
			if u.RawQuery != "" {
				target += "?" + u.RawQuery
			}
			if d := rb.File.Check("Googlebot", target); !d.Allowed {
				res.Indexable = false
				add("robots", "matched a Disallow rule for Googlebot in robots.txt")
			}
		}
	}
	cut := ""
	if !r.Complete() {
		cut = fmt.Sprintf(" (only the first %d bytes were read: %s)", len(r.Body), cutReason(r))
	}
	if ok, why := pageMarkdown(p.Markdown); ok {
		res.Markdown = true
	} else {
		add("markdown", "%s", why)
	}
	if p.JSONLD != nil {
		res.JSONLDErrors = p.JSONLD.Errors
	}
	switch {
	case p.JSONLD != nil && p.JSONLD.Parsed > 0:
		res.StructuredData = true
	case p.JSONLD != nil && p.JSONLD.Blocks > 0:
		add("jsonld", "carried JSON-LD that does not parse%s", cut)
	default:
		add("jsonld", "carried no JSON-LD block%s", cut)
	}
	switch {
	case p.H1 == 1:
		res.Headings = true
	case p.H1 == 0:
		add("h1", "carried no h1%s", cut)
	default:
		add("h1", "carried %d h1 headings", p.H1)
	}
	return res, probs
}

// pageMarkdown is the homepage's markdown rule (1.17's pass) for one page:
// a whole, non-HTML body typed text/markdown, with Vary: Accept.
func pageMarkdown(r *fetch.Response) (bool, string) {
	switch {
	case r == nil:
		return false, "got no markdown request"
	case r.Err != nil:
		return false, "did not answer Accept: text/markdown (" + fetch.Describe(r.Err) + ")"
	case !r.OK():
		return false, fmt.Sprintf("answered Accept: text/markdown with %d", r.Status)
	case !r.Complete():
		return false, "sent a markdown answer that was cut (" + cutReason(r) + ")"
	case r.LooksHTML():
		return false, "answered Accept: text/markdown with HTML"
	case len(r.Body) == 0:
		return false, "answered Accept: text/markdown with an empty body"
	}
	// What passes 1.17 for the homepage passes here for each page.
	switch _, ct, vary := markdownServed(r); {
	case ct != "text/markdown":
		return false, "answered Accept: text/markdown with " + clip.To(orUnknown(ct), 60) + " instead of text/markdown"
	case !vary:
		return false, "served markdown without Vary: Accept"
	}
	return true, ""
}
