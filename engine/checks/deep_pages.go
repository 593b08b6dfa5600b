package checks

import (
	"fmt"
	"net/url"
	"strings"

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

type pageProblem struct{ kind, text string }

// pageResult is one sampled page in the details.
type pageResult struct {
	URL            string   `json:"url"`
	Status         int      `json:"status"`
	Indexable      bool     `json:"indexable"`
	Markdown       bool     `json:"markdown"`
	StructuredData bool     `json:"structuredData"`
	Headings       bool     `json:"headings"`
	Problems       []string `json:"problems,omitempty"`
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
	count := map[string]int{}
	example := map[string]string{}
	passed := 0
	for _, p := range doc.Pages {
		res, probs := judgePage(p, rb)
		seen := map[string]bool{}
		for _, pr := range probs {
			res.Problems = append(res.Problems, pr.text)
			if !seen[pr.kind] {
				seen[pr.kind] = true
				count[pr.kind]++
				if example[pr.kind] == "" {
					example[pr.kind] = p.URL + " " + pr.text
				}
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
	top, fix := "", ""
	for _, k := range pageProblemFix {
		if count[k.kind] > count[top] {
			top, fix = k.kind, k.fix
		}
	}
	msg += fmt.Sprintf(" Most common problem (%d of %d pages): %s. %s", count[top], n, example[top], fix)
	if len(count) > 1 {
		msg += " Other problems are listed per page in the details."
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
		add("nothtml", "answered %s, not HTML", orUnknown(r.ContentType()))
		return res, probs
	}
	res.Indexable = true
	if p.SameAsHome {
		res.Indexable = false
		add("soft404", "serves the homepage's HTML (a soft 404)")
	}
	for _, v := range r.Header.Values("X-Robots-Tag") {
		if d, applies := robotsDirectives(v); applies && pageNoindex(d) {
			res.Indexable = false
			add("noindex", "says noindex in its X-Robots-Tag header")
			break
		}
	}
	for _, m := range p.RobotsMeta {
		if pageNoindex(strings.ToLower(m.Content)) {
			res.Indexable = false
			add("noindex", "says noindex in <meta name=%q>", m.Name)
			break
		}
	}
	if rb.File != nil {
		if u, err := url.Parse(p.URL); err == nil {
			target := u.EscapedPath()
			if u.RawQuery != "" {
				target += "?" + u.RawQuery
			}
			if d := rb.File.Check("Googlebot", target); !d.Allowed {
				res.Indexable = false
				add("robots", "is disallowed by robots.txt")
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
	switch {
	case p.JSONLD != nil && p.JSONLD.Parsed > 0:
		res.StructuredData = true
	case p.JSONLD != nil && p.JSONLD.Blocks > 0:
		add("jsonld", "has JSON-LD that does not parse%s", cut)
	default:
		add("jsonld", "has no JSON-LD block%s", cut)
	}
	switch {
	case p.H1 == 1:
		res.Headings = true
	case p.H1 == 0:
		add("h1", "has no h1%s", cut)
	default:
		add("h1", "has %d h1 headings", p.H1)
	}
	return res, probs
}

func pageNoindex(directives string) bool {
	for _, d := range strings.Split(directives, ",") {
		if d = strings.TrimSpace(d); d == "noindex" || d == "none" {
			return true
		}
	}
	return false
}

// pageMarkdown is the homepage's markdown rule (1.17's pass) for one page:
// a whole, non-HTML body typed text/markdown, with Vary: Accept.
func pageMarkdown(r *fetch.Response) (bool, string) {
	switch {
	case r == nil:
		return false, "was not asked for markdown"
	case r.Err != nil:
		return false, "did not answer Accept: text/markdown (" + fetch.Describe(r.Err) + ")"
	case !r.OK():
		return false, fmt.Sprintf("answers Accept: text/markdown with %d", r.Status)
	case !r.Complete():
		return false, "sent a markdown answer that was cut (" + cutReason(r) + ")"
	case r.LooksHTML():
		return false, "answers Accept: text/markdown with HTML"
	case len(r.Body) == 0:
		return false, "answers Accept: text/markdown with an empty body"
	}
	// What passes 1.17 for the homepage passes here for each page.
	switch _, ct, vary := markdownServed(r); {
	case ct != "text/markdown":
		return false, "answers Accept: text/markdown with " + orUnknown(ct) + " instead of text/markdown"
	case !vary:
		return false, "serves markdown without Vary: Accept"
	}
	return true, ""
}
