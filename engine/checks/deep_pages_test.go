package checks

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/jsonld"
	"github.com/agentready/agentready/engine/parse/robots"
	"github.com/agentready/agentready/engine/report"
)

func judgePages(t *testing.T, doc *gather.PagesDoc, robotsTxt string) report.DeepProbe {
	t.Helper()
	set := gather.NewSet(gather.Site{})
	gather.Put(set, gather.Pages, doc)
	rb := &gather.RobotsTxt{Resp: &fetch.Response{Status: 404}}
	if robotsTxt != "" {
		rb = &gather.RobotsTxt{Resp: &fetch.Response{Status: 200}, File: robots.Parse([]byte(robotsTxt))}
	}
	gather.Put(set, gather.Robots, rb)
	for _, p := range Deep() {
		if p.ID == "pages.sample" {
			return p.Judge(set)
		}
	}
	t.Fatal("pages.sample is not registered")
	return report.DeepProbe{}
}

// goodPage is a page with all four: indexable HTML, markdown with Vary,
// parseable JSON-LD, one h1. mod breaks what a case needs broken.
func goodPage(path string, mod func(*gather.PageSample)) *gather.PageSample {
	p := &gather.PageSample{
		URL:    "https://a.example" + path,
		Resp:   &fetch.Response{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<!doctype html><h1>x</h1>")},
		HTML:   true,
		H1:     1,
		JSONLD: jsonld.Parse([]string{`{"@type":"WebPage","name":"x"}`}),
		Markdown: &fetch.Response{Status: 200, Header: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}, "Vary": {"Accept-Encoding, Accept"}},
			Body: []byte("# x\n")},
	}
	if mod != nil {
		mod(p)
	}
	return p
}

func pagesOf(good, bad int, mod func(*gather.PageSample)) *gather.PagesDoc {
	doc := &gather.PagesDoc{Source: "sitemap", SitemapURL: "https://a.example/sitemap.xml"}
	for i := 0; i < good; i++ {
		doc.Pages = append(doc.Pages, goodPage(fmt.Sprintf("/ok%d", i), nil))
	}
	for i := 0; i < bad; i++ {
		doc.Pages = append(doc.Pages, goodPage(fmt.Sprintf("/bad%d", i), mod))
	}
	return doc
}

// The 80% boundary, and the most common problem named with its fix.
func TestPagesSampleThresholds(t *testing.T) {
	noJSONLD := func(p *gather.PageSample) { p.JSONLD = jsonld.Parse(nil) }
	cases := []struct {
		good, bad int
		want      report.Status
		contains  string
	}{
		{5, 0, report.Pass, "5 of 5 pages pass (sampled from the sitemap https://a.example/sitemap.xml). Each is indexable"},
		{4, 1, report.Pass, "4 of 5 pages pass"},
		{3, 1, report.Partial, "3 of 4 pages pass"},
		{1, 9, report.Partial, "Most common problem: 9 of 10 pages carried no JSON-LD block (e.g. https://a.example/bad0). Describe each page"},
		{0, 3, report.Fail, "0 of 3 pages pass"},
	}
	for _, c := range cases {
		p := judgePages(t, pagesOf(c.good, c.bad, noJSONLD), "")
		if p.Status != c.want || !strings.Contains(p.Message, c.contains) {
			t.Errorf("%d good, %d bad: %s %q", c.good, c.bad, p.Status, p.Message)
		}
		if det := p.Details["pages"].([]pageResult); len(det) != c.good+c.bad {
			t.Errorf("%d page results", len(det))
		}
	}
	na := judgePages(t, &gather.PagesDoc{SitemapURL: "https://a.example/sitemap.xml", OffOrigin: 2}, "")
	if na.Status != report.NA || !strings.Contains(na.Message, "Neither the sitemap (https://a.example/sitemap.xml)") || !strings.Contains(na.Message, "2 URLs on other origins were not sampled") {
		t.Errorf("na: %s %q", na.Status, na.Message)
	}
}

// Each way a page can fall short is detected on its own, and named.
func TestPagesSampleProblems(t *testing.T) {
	cases := []struct {
		name   string
		mod    func(*gather.PageSample)
		robots string
		want   string // the page's one problem
		field  string // which of the four is false
	}{
		{"noindex header", func(p *gather.PageSample) { p.Resp.Header.Set("X-Robots-Tag", "noindex, nofollow") }, "", "set noindex in X-Robots-Tag", "indexable"},
		{"noindex for another bot only", func(p *gather.PageSample) { p.Resp.Header.Set("X-Robots-Tag", "otherbot: noindex") }, "", "", ""},
		{"googlebot meta none", func(p *gather.PageSample) { p.RobotsMeta = []htmlpage.Meta{{Name: "googlebot", Content: "NONE"}} }, "", `set none (noindex, nofollow) in <meta name="googlebot">`, "indexable"},
		{"robots.txt", nil, "User-agent: *\nDisallow: /bad\n", "matched a Disallow rule for Googlebot in robots.txt", "indexable"},
		{"soft 404", func(p *gather.PageSample) { p.SameAsHome = true }, "", "served the homepage's HTML (a soft 404)", "indexable"},
		{"markdown without Vary", func(p *gather.PageSample) { p.Markdown.Header.Del("Vary") }, "", "served markdown without Vary: Accept", "markdown"},
		{"markdown as HTML", func(p *gather.PageSample) { p.Markdown.Body = []byte("<!doctype html><p>x") }, "", "answered Accept: text/markdown with HTML", "markdown"},
		{"markdown mistyped", func(p *gather.PageSample) { p.Markdown.Header.Set("Content-Type", "text/plain") }, "", "with text/plain instead of text/markdown", "markdown"},
		{"markdown 406", func(p *gather.PageSample) { p.Markdown.Status = 406 }, "", "answered Accept: text/markdown with 406", "markdown"},
		{"markdown transport error", func(p *gather.PageSample) { p.Markdown = &fetch.Response{Err: context.DeadlineExceeded} }, "", "did not answer Accept: text/markdown (", "markdown"},
		{"JSON-LD broken", func(p *gather.PageSample) { p.JSONLD = jsonld.Parse([]string{"{nope"}) }, "", "carried JSON-LD that does not parse", "structuredData"},
		{"two h1", func(p *gather.PageSample) { p.H1 = 2 }, "", "carried 2 h1 headings", "headings"},
		{"no h1, page cut", func(p *gather.PageSample) { p.H1 = 0; p.Resp.Cut = "it is larger than the 2 MiB the scanner reads" }, "",
			"carried no h1 (only the first 25 bytes were read: it is larger than the 2 MiB the scanner reads)", "headings"},
	}
	for _, c := range cases {
		p := judgePages(t, pagesOf(0, 1, c.mod), c.robots)
		res := p.Details["pages"].([]pageResult)[0]
		flags := map[string]bool{"indexable": res.Indexable, "markdown": res.Markdown, "structuredData": res.StructuredData, "headings": res.Headings}
		if c.want == "" {
			if p.Status != report.Pass || len(res.Problems) != 0 {
				t.Errorf("%s: %s %v", c.name, p.Status, res.Problems)
			}
			continue
		}
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0], c.want) || !strings.Contains(p.Message, c.want) {
			t.Errorf("%s: problems %q, message %q", c.name, res.Problems, p.Message)
		}
		for f, v := range flags {
			if v == (f == c.field) {
				t.Errorf("%s: %s = %v", c.name, f, v)
			}
		}
	}
}

// A page that did not answer 200 HTML has that one problem, and the other
// criteria are simply false; transport errors are worded by fetch, not Go.
func TestPagesSampleUnanswered(t *testing.T) {
	doc := pagesOf(0, 0, nil)
	doc.Pages = []*gather.PageSample{
		{URL: "https://a.example/gone", Resp: &fetch.Response{Status: 404}},
		{URL: "https://a.example/gone2", Resp: &fetch.Response{Status: 410}},
		{URL: "https://a.example/slow", Resp: &fetch.Response{Err: context.DeadlineExceeded}},
		{URL: "https://a.example/data", Resp: &fetch.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}}},
	}
	p := judgePages(t, doc, "")
	res := p.Details["pages"].([]pageResult)
	if p.Status != report.Fail || !strings.Contains(p.Message, "Most common problem: 1 of 4 pages answered 404 (e.g. https://a.example/gone) and 1 answered 410 (e.g. https://a.example/gone2).") ||
		!strings.Contains(p.Message, "Also: 1 of 4 pages did not answer (") || !strings.Contains(p.Message, "; 1 of 4 pages answered application/json, not HTML.") {
		t.Errorf("%s %q", p.Status, p.Message)
	}
	if !strings.HasPrefix(res[2].Problems[0], "did not answer (") || strings.Contains(res[2].Problems[0], "context deadline exceeded") {
		t.Errorf("transport error worded %q", res[2].Problems[0])
	}
	if res[3].Problems[0] != "answered application/json, not HTML" || res[3].Indexable {
		t.Errorf("non-HTML page: %+v", res[3])
	}
}

// The message counts each wording of a problem truly (it once said "16 of 20
// pages answered 404" when 12 answered 404 and 4 answered 410, "3 noindex in
// <meta name=robots>" when one used the meta), most frequent first, and
// counts what is beyond the wordings it spells out.
func TestPagesSampleCountsEachWording(t *testing.T) {
	page := func(path string, mod func(*gather.PageSample)) *gather.PageSample { return goodPage(path, mod) }
	status := func(code int) func(*gather.PageSample) {
		return func(p *gather.PageSample) { p.Resp.Status = code }
	}
	doc := pagesOf(1, 0, nil)
	for i := 0; i < 12; i++ {
		doc.Pages = append(doc.Pages, page(fmt.Sprintf("/gone%d", i), status(404)))
	}
	for i := 0; i < 4; i++ {
		doc.Pages = append(doc.Pages, page(fmt.Sprintf("/removed%d", i), status(410)))
	}
	doc.Pages = append(doc.Pages,
		page("/meta", func(p *gather.PageSample) { p.RobotsMeta = []htmlpage.Meta{{Name: "robots", Content: "noindex"}} }),
		page("/header", func(p *gather.PageSample) { p.Resp.Header.Set("X-Robots-Tag", "noindex") }),
		page("/bot-meta", func(p *gather.PageSample) { p.RobotsMeta = []htmlpage.Meta{{Name: "googlebot", Content: "noindex"}} }))
	p := judgePages(t, doc, "")
	for _, want := range []string{
		"1 of 20 pages pass",
		"Most common problem: 12 of 20 pages answered 404 (e.g. https://a.example/gone0) and 4 answered 410 (e.g. https://a.example/removed0). List only live pages",
		`Also: 1 of 20 pages set noindex in <meta name="robots">, 1 set noindex in X-Robots-Tag and 1 set noindex in <meta name="googlebot">.`,
	} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message %q\nlacks %q", p.Message, want)
		}
	}

	// Six wordings of one kind: four are spelled out, the rest counted.
	doc = pagesOf(0, 0, nil)
	for i, code := range []int{500, 500, 502, 503, 504, 404, 410} {
		doc.Pages = append(doc.Pages, page(fmt.Sprintf("/p%d", i), status(code)))
	}
	p = judgePages(t, doc, "")
	if want := "Most common problem: 2 of 7 pages answered 500 (e.g. https://a.example/p0), 1 answered 502 (e.g. https://a.example/p2), 1 answered 503 (e.g. https://a.example/p3), 1 answered 504 (e.g. https://a.example/p4) and 2 in other ways."; !strings.Contains(p.Message, want) {
		t.Errorf("message %q\nlacks %q", p.Message, want)
	}
}

// A site's text quoted in a page's problem is cut by runes: a multibyte
// Content-Type longer than the quote never splits a UTF-8 sequence.
func TestPagesSampleClipsMultibyte(t *testing.T) {
	ct := "text/" + strings.Repeat("日本語", 40)
	doc := pagesOf(0, 1, func(p *gather.PageSample) {
		p.HTML = false
		p.Resp.Header.Set("Content-Type", ct)
	})
	p := judgePages(t, doc, "")
	prob := p.Details["pages"].([]pageResult)[0].Problems[0]
	if !utf8.ValidString(p.Message) || !utf8.ValidString(prob) || !strings.Contains(prob, "…, not HTML") || len([]rune(prob)) > 80 {
		t.Errorf("problem %q (message %q)", prob, p.Message)
	}
}

// 4.3 (the homepage) and pages.sample (each page) read robots directives
// with one function, so they agree on every way of saying noindex: a
// header scoped to another bot, or a directive that takes a value, is not
// noindex for Google.
func TestNoindexAgreesWithHomepageCheck(t *testing.T) {
	cases := []struct {
		name    string
		header  string
		meta    []htmlpage.Meta
		noindex string // the rule 4.3 reports, "" when indexable
	}{
		{"header", "noindex, nofollow", nil, "X-Robots-Tag: noindex"},
		{"header none, any case", "NONE", nil, "X-Robots-Tag: none"},
		{"header for googlebot", "googlebot: noindex", nil, "X-Robots-Tag (googlebot): noindex"},
		{"header for another bot", "otherbot: noindex", nil, ""},
		{"max-snippet is not a bot", "max-snippet: 0", nil, ""},
		{"meta robots", "", []htmlpage.Meta{{Name: "robots", Content: "NoIndex"}}, `<meta name="robots">: noindex`},
		{"meta googlebot", "", []htmlpage.Meta{{Name: "googlebot", Content: "none"}}, `<meta name="googlebot">: none`},
		{"meta for another bot", "", []htmlpage.Meta{{Name: "bingbot", Content: "noindex"}}, ""},
	}
	check, ok := ByID("4.3")
	if !ok {
		t.Fatal("4.3 is not registered")
	}
	for _, c := range cases {
		h := http.Header{"Content-Type": {"text/html"}}
		if c.header != "" {
			h.Set("X-Robots-Tag", c.header)
		}
		set := gather.NewSet(gather.Site{})
		gather.Put(set, gather.Home, &gather.HomePage{Resp: &fetch.Response{Status: 200, Header: h}, Page: &htmlpage.Page{Metas: c.meta}})
		home := check.Judge(set)
		page := judgePages(t, pagesOf(0, 1, func(p *gather.PageSample) { p.Resp.Header = h; p.RobotsMeta = c.meta }), "")
		res := page.Details["pages"].([]pageResult)[0]
		switch {
		case c.noindex == "" && (home.Status == report.Fail || !res.Indexable):
			t.Errorf("%s: 4.3 %s %q, page indexable %v %q", c.name, home.Status, home.Message, res.Indexable, res.Problems)
		case c.noindex != "" && (home.Status != report.Fail || !strings.Contains(home.Message, "("+c.noindex+")") || res.Indexable):
			t.Errorf("%s: 4.3 %s %q, page indexable %v, want noindex from %q", c.name, home.Status, home.Message, res.Indexable, c.noindex)
		}
	}
}
