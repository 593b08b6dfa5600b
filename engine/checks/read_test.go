package checks

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/markdown"
	"github.com/agentready/agentready/engine/report"
)

// readPage is a sampled page that answered status with html (parsed when it
// is HTML), at pageURL, after the given redirects.
func readPage(pageURL string, status int, html string, redirects ...string) *gather.ReadPage {
	final := pageURL
	if len(redirects) > 0 {
		final = redirects[len(redirects)-1]
	}
	r := &fetch.Response{RequestURL: pageURL, FinalURL: final, Status: status, Body: []byte(html),
		Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Redirects: redirects}
	p := &gather.ReadPage{URL: pageURL, HTML: r, TwinURL: gather.TwinURL(pageURL)}
	if r.LooksHTML() {
		base, _ := url.Parse(final)
		p.Page = htmlpage.Parse(r.Body, base)
	}
	return p
}

func nWords(n int, prefix string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" " + prefix + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+(i/26)%26)))
	}
	return b.String()
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestCacheProblem(t *testing.T) {
	cases := []struct {
		name string
		h    http.Header
		fail bool
		why  string // a word the reason must hold
	}{
		{"nothing at all", hdr(), true, "no Cache-Control"},
		{"nil header", nil, true, "no Cache-Control"},
		{"only Expires", hdr("Expires", "Wed, 21 Oct 2030 07:28:00 GMT"), true, "Expires"},
		{"no-cache", hdr("Cache-Control", "no-cache"), false, ""},
		{"no-store among others", hdr("Cache-Control", "private, No-Store"), false, ""},
		{"no-cache beats a long max-age", hdr("Cache-Control", "max-age=31536000, no-cache"), false, ""},
		{"ETag alone", hdr("ETag", `"abc"`), false, ""},
		{"Last-Modified alone", hdr("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"), false, ""},
		{"max-age 0", hdr("Cache-Control", "max-age=0"), false, ""},
		{"max-age exactly a day", hdr("Cache-Control", "public, max-age=86400"), false, ""},
		{"max-age a day and a second", hdr("Cache-Control", "public, max-age=86401"), true, "max-age=86401"},
		{"max-age 30 days", hdr("Cache-Control", "public, max-age=2592000"), true, "30 days"},
		{"max-age 30 days with must-revalidate", hdr("Cache-Control", "max-age=2592000, must-revalidate"), false, ""},
		{"quoted max-age", hdr("Cache-Control", `max-age="600"`), false, ""},
		{"upper-case directive", hdr("Cache-Control", "MAX-AGE=600"), false, ""},
		{"s-maxage wins over a long max-age", hdr("Cache-Control", "max-age=2592000, s-maxage=60"), false, ""},
		{"long s-maxage", hdr("Cache-Control", "max-age=60, s-maxage=2592000"), true, "max-age=2592000"},
		{"a validator does not excuse a month", hdr("Cache-Control", "max-age=2592000", "ETag", `"x"`), true, "30 days"},
		{"unparseable max-age, validator", hdr("Cache-Control", "max-age=soon", "ETag", `"x"`), false, ""},
		{"unparseable max-age, nothing else", hdr("Cache-Control", "max-age=soon"), true, "no Cache-Control"},
		{"two days in hours? no, days", hdr("Cache-Control", "max-age=172800"), true, "2 days"},
		{"36 hours", hdr("Cache-Control", "max-age=129600"), true, "36 hours"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CacheProblem(&fetch.Response{Status: 200, Header: c.h})
			if (got != "") != c.fail {
				t.Fatalf("CacheProblem = %q, want failing %v", got, c.fail)
			}
			if c.why != "" && !strings.Contains(got, c.why) {
				t.Errorf("reason %q does not mention %q", got, c.why)
			}
		})
	}
}

func TestHonesty(t *testing.T) {
	prose := "<main><h1>Install</h1><p>" + nWords(300, "w") + "</p></main>"
	login := `<main><h1>Sign in</h1><form><input name=email><input type="Password" name=pw></form></main>`
	cases := []struct {
		name string
		p    *gather.ReadPage
		want string // part of the reason; "" for honest
	}{
		{"a real page", readPage("https://a.example/docs/install", 200, "<title>Install</title>"+prose), ""},
		{"not found title", readPage("https://a.example/x", 200, "<title>Page not found – Ledger</title>"+prose), "soft 404"},
		{"404 in the h1", readPage("https://a.example/x", 200, "<title>Ledger</title><h1>404</h1><p>"+nWords(300, "w")+"</p>"), "soft 404"},
		{"no longer exists (the regexp wants exist, not exists)", readPage("https://a.example/x", 200, "<title>This page no longer exists</title>"), "soft 404"},
		{"a guide about errors is content", readPage("https://a.example/docs/errors", 200, "<title>Errors: 400, 401, 404 Not Found and 429</title><h1>Errors</h1>"+prose), ""},
		{"oops heading", readPage("https://a.example/x", 200, "<title>Ledger</title><h1>Oops! Page not found</h1>"+prose), "soft 404"},
		{"a 404 answered as 404 is honest", readPage("https://a.example/x", 404, "<title>Page not found</title>"), ""},
		{"sign-in wall", readPage("https://a.example/docs/reference", 200, "<title>Sign in</title>"+login), "sign-in form"},
		{"a long page with a password field is not a wall", readPage("https://a.example/docs/auth", 200, "<title>Auth</title>"+prose+`<input type=password>`), ""},
		{"redirected to a login page", readPage("https://a.example/docs/private", 200, "<title>Welcome</title>"+prose, "https://a.example/login?next=/docs/private"), "sign-in page"},
		{"a login path without a redirect is a page", readPage("https://a.example/login", 200, "<title>Welcome</title>"+prose), ""},
		{"the sign-in page itself, listed in the sitemap, is honest", readPage("https://a.example/login", 200, "<title>Sign in</title>"+login), ""},
		{"the sign-in page itself after a slash redirect", readPage("https://a.example/users/sign_in", 200, "<title>Sign in</title>"+login, "https://a.example/users/sign_in/"), ""},
		{"a docs page about auth behind a sign-in form", readPage("https://a.example/docs/auth", 200, "<title>Sign in</title>"+login), "sign-in form"},
		{"a docs page about OAuth behind a sign-in form", readPage("https://a.example/docs/api/oauth/", 200, "<title>Sign in</title>"+login), "sign-in form"},
		{"not HTML", &gather.ReadPage{URL: "https://a.example/x", HTML: &fetch.Response{Status: 200, Body: []byte("{}"), Header: hdr("Content-Type", "application/json")}}, ""},
		{"no answer", &gather.ReadPage{URL: "https://a.example/x", HTML: &fetch.Response{Err: fetch.ErrTooManyRedirects}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Honesty(c.p)
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("Honesty = %q, want %q", got, c.want)
			}
		})
	}
}

// A documentation page about status codes is a page, not a soft 404: its
// title names 404 because it explains it.
func TestHonestyPageAboutNotFound(t *testing.T) {
	p := readPage("https://a.example/docs/errors", 200, "<title>Errors: 400, 401, 404 Not Found and 429</title><main><h1>Handling 404 Not Found errors</h1><p>"+nWords(400, "e")+"</p></main>")
	if got := Honesty(p); got != "" {
		t.Errorf("a 400-word guide titled about 404 errors is judged %q", got)
	}
}

func TestRedirect(t *testing.T) {
	site, _ := url.Parse("https://a.example/")
	page := "<title>x</title><main><p>" + nWords(60, "w") + "</p></main>"
	tooMany := readPage("https://a.example/loop", 0, "", "https://a.example/loop?1", "https://a.example/loop?11")
	tooMany.HTML.Err, tooMany.Page = fetch.ErrTooManyRedirects, nil
	refused := &gather.ReadPage{URL: "https://a.example/x", HTML: &fetch.Response{Err: fetch.ErrTooManyRedirects}}
	cases := []struct {
		name string
		p    *gather.ReadPage
		want string
	}{
		{"direct", readPage("https://a.example/a", 200, page), ""},
		{"one same-site hop", readPage("https://a.example/a", 200, page, "https://a.example/a/"), ""},
		{"two hops", readPage("https://a.example/a", 200, page, "https://a.example/b", "https://a.example/b/"), ""},
		{"three hops", readPage("https://a.example/a", 200, page, "https://a.example/b", "https://a.example/c", "https://a.example/c/"), "3 redirects"},
		{"to www is the same site", readPage("https://a.example/a", 200, page, "https://www.a.example/a"), ""},
		{"to another site", readPage("https://a.example/a", 200, page, "https://b.example/a"), "another site"},
		{"meta refresh with a URL", readPage("https://a.example/sale", 200, `<meta http-equiv="Refresh" content="5; URL=/collections/sale">`+page), "meta http-equiv"},
		{"meta refresh without a URL only reloads", readPage("https://a.example/live", 200, `<meta http-equiv="refresh" content="30">`+page), ""},
		{"gives up redirecting", tooMany, "gives up"},
		{"no answer at all is not judged", refused, ""},
		{"nil", &gather.ReadPage{URL: "https://a.example/x"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Redirect(c.p, site)
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("Redirect = %q, want %q", got, c.want)
			}
		})
	}
}

func TestParity(t *testing.T) {
	body := nWords(100, "k")
	html := "<title>t</title><nav>" + nWords(30, "nav") + "</nav><main><h1>Guide</h1><p>" + body + "</p></main>"
	md := func(s string, ct string) *fetch.Response {
		return &fetch.Response{Status: 200, Body: []byte(s), Header: hdr("Content-Type", ct)}
	}
	half := strings.Fields(body)
	cases := []struct {
		name       string
		twin, nego *fetch.Response
		html       string
		want       int // -1, or a lower..upper band
		lo, hi     int
	}{
		{"no markdown", nil, nil, html, -1, 0, 0},
		{"whole twin", md("# Guide\n\n"+body, "text/markdown"), nil, html, 0, 100, 100},
		{"upper-case twin still matches", md(strings.ToUpper("# Guide\n\n"+body), "text/markdown"), nil, html, 0, 100, 100},
		{"half the words", md(strings.Join(half[:len(half)/2], " "), "text/markdown"), nil, html, 0, 45, 55},
		{"twin answers HTML: negotiated markdown instead", md(html, "text/html"), md("Guide "+body, "text/markdown"), html, 0, 100, 100},
		{"twin 404, negotiation HTML", &fetch.Response{Status: 404, Body: []byte("nope"), Header: hdr("Content-Type", "text/plain")}, md(html, "text/html"), html, -1, 0, 0},
		{"too few words to compare", md("Short", "text/markdown"), nil, "<main><h1>Short</h1><p>one two three</p></main>", -1, 0, 0},
		{"non-ASCII words", md("Größe über straße "+nWords(25, "é"), "text/markdown"), nil, "<main><p>Größe über Straße " + nWords(25, "é") + "</p></main>", 0, 100, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := readPage("https://a.example/docs/guide", 200, c.html)
			p.Twin, p.Negotiated = c.twin, c.nego
			got := Parity(p)
			if c.want == -1 {
				if got != -1 {
					t.Errorf("Parity = %d, want -1", got)
				}
				return
			}
			if got < c.lo || got > c.hi {
				t.Errorf("Parity = %d, want %d..%d", got, c.lo, c.hi)
			}
		})
	}
	if got := Parity(&gather.ReadPage{}); got != -1 {
		t.Errorf("Parity of an unanswered page = %d", got)
	}
}

func TestContentStart(t *testing.T) {
	menu := "<nav>" + strings.Repeat("<a href=/x>Section link</a> ", 40) + "</nav>"
	cases := []struct {
		name   string
		html   string
		lo, hi int // -1, -1: no main content
	}{
		{"main first", "<main><h1>T</h1><p>" + nWords(50, "w") + "</p></main>", 0, 0},
		{"after a long menu", menu + "<main><p>" + nWords(20, "w") + "</p></main>", 51, 99},
		{"article marks it", menu + "<article><p>" + nWords(200, "w") + "</p></article>", 1, 50},
		{"role=main marks it", menu + `<div role="main"><p>` + nWords(200, "w") + "</p></div>", 1, 50},
		{"h1 when nothing else", menu + "<h1>T</h1><p>" + nWords(20, "w") + "</p>", 51, 99},
		{"no marker", "<div><p>" + nWords(50, "w") + "</p></div>", -1, -1},
		{"empty page", "<html><body></body></html>", -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ContentStart(readPage("https://a.example/p", 200, c.html))
			if got < c.lo || got > c.hi {
				t.Errorf("ContentStart = %d, want %d..%d", got, c.lo, c.hi)
			}
		})
	}
	if got := ContentStart(&gather.ReadPage{}); got != -1 {
		t.Errorf("ContentStart of an unparsed page = %d", got)
	}
}

func TestShell(t *testing.T) {
	shell := `<title>App</title><script type=module src="/assets/app.js"></script><div id=root></div>`
	if !Shell(readPage("https://a.example/", 200, shell)) {
		t.Error("an empty root div with a module script is not a shell")
	}
	if Shell(readPage("https://a.example/", 200, `<title>App</title><div id=root></div>`)) {
		t.Error("a short page without scripts is a shell")
	}
	if Shell(readPage("https://a.example/", 200, shell+"<main><p>"+nWords(ShellWords, "w")+"</p></main>")) {
		t.Error("a page with enough server-rendered text is a shell")
	}
	if Shell(&gather.ReadPage{}) {
		t.Error("an unparsed page is a shell")
	}
}

func TestNormalPage(t *testing.T) {
	same := [][]string{
		{"https://a.example/docs/intro", "http://a.example/docs/intro", "https://www.a.example/docs/intro", "https://a.example/docs/intro/",
			"https://a.example/docs/intro.md", "https://a.example/docs/intro.html", "https://a.example/docs/intro/index.md",
			"https://a.example/docs/intro/index.html", "https://a.example/docs/intro.html.md", "https://A.EXAMPLE/Docs/Intro", "https://a.example:443/docs/intro#part"},
		{"https://a.example/", "https://a.example", "https://a.example/index.md", "https://a.example/index.html"},
		{"https://a.example/caf%C3%A9", "https://a.example/café", "https://a.example/caf%c3%a9.md"},
		{"https://a.example/docs/reindex", "https://a.example/docs/reindex.md", "https://a.example/docs/reindex/"},
		{"https://a.example/blog/appendix", "https://a.example/blog/appendix.html"},
	}
	for _, group := range same {
		want := NormalPage(group[0])
		for _, u := range group[1:] {
			if got := NormalPage(u); got != want {
				t.Errorf("NormalPage(%q) = %q, want %q (as %q)", u, got, want, group[0])
			}
		}
	}
	differ := [][2]string{
		{"https://a.example/docs/a", "https://a.example/docs/b"},
		{"https://a.example/search?q=1", "https://a.example/search?q=2"},
		{"https://a.example/docs", "https://a.example/docs/index/x"},
		{"https://a.example/x", "https://b.example/x"},
	}
	for _, d := range differ {
		if NormalPage(d[0]) == NormalPage(d[1]) {
			t.Errorf("NormalPage makes %q and %q the same page", d[0], d[1])
		}
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 4: 1, 5: 2, 100_000: 25_000, 100_001: 25_001} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestLlmsAnswer(t *testing.T) {
	html, twin := &fetch.Response{Status: 200}, &fetch.Response{Status: 404}
	base := gather.ReadPage{URL: "https://a.example/docs/a", TwinURL: "https://a.example/docs/a.md", HTML: html, Twin: twin}
	cases := []struct {
		link string
		want *fetch.Response
	}{
		{"", nil},
		{"https://a.example/docs/a", html},
		{"https://a.example/docs/a.md", twin},
		// llms.txt links with a fragment name the same document.
		{"https://a.example/docs/a.md#install", twin},
		{"https://a.example/docs/a#install", html},
	}
	for _, c := range cases {
		p := base
		p.LlmsLink = c.link
		if got := LlmsAnswer(&p); got != c.want {
			t.Errorf("LlmsAnswer(%q) = %+v, want %+v", c.link, got, c.want)
		}
	}
}

// sampleSet is a gathered set holding only a read sample and llms.txt.
func sampleSet(doc *gather.ReadDoc, llms bool) *gather.Set {
	target, _ := url.Parse("https://a.example/")
	set := gather.NewSet(gather.Site{Target: target, Origin: "https://a.example"})
	gather.Put(set, gather.ReadSample, doc)
	l := &gather.LlmsTxt{Resp: &fetch.Response{Status: 404, Header: hdr("Content-Type", "text/plain")}}
	if llms {
		l.Resp = &fetch.Response{Status: 200, Body: []byte("# Site\n"), Header: hdr("Content-Type", "text/plain")}
	}
	gather.Put(set, gather.Llms, l)
	return set
}

type readDetails struct {
	OK      int       `json:"ok"`
	Of      int       `json:"of"`
	Percent int       `json:"percent"`
	Failing []PageWhy `json:"failing"`
}

// The verdict is proportional: all pass, at least half partial, below
// half fail, nothing judged na with the check's own reason.
func TestReadCheckJudgeProportional(t *testing.T) {
	cases := []struct {
		ok, of  int
		ladder  *[2]int
		status  report.Status
		percent int
	}{
		{10, 10, nil, report.Pass, 100},
		{1, 1, nil, report.Pass, 100},
		{9, 10, nil, report.Partial, 90},
		{5, 10, nil, report.Partial, 50},
		{1, 2, nil, report.Partial, 50},
		{4, 9, nil, report.Fail, 44},
		{0, 1, nil, report.Fail, 0},
		{49, 50, nil, report.Partial, 98},
		{0, 0, nil, report.NA, 0},
		// R.12's ladder: 95% passes without every page.
		{95, 100, &[2]int{95, 50}, report.Pass, 95},
		{19, 20, &[2]int{95, 50}, report.Pass, 95},
		{94, 100, &[2]int{95, 50}, report.Partial, 94},
		{50, 100, &[2]int{95, 50}, report.Partial, 50},
		{49, 100, &[2]int{95, 50}, report.Fail, 49},
	}
	for _, c := range cases {
		o := ReadOutcome{OK: c.ok, Of: c.of, Ladder: c.ladder, NA: "nothing to judge here"}
		for i := c.ok; i < c.of; i++ {
			o.Failed = append(o.Failed, PageWhy{URL: "https://a.example/p" + string(rune('a'+i%26)), Why: "broke"})
		}
		rc := &ReadCheck{Definition: Definition{ID: "R.99", Name: "Test", Category: report.ReadGroup, Fix: "fix it"},
			Run: func(gather.Source) ReadOutcome { return o }}
		res, n := rc.Judge(sampleSet(&gather.ReadDoc{Limit: 10}, false))
		if res.Status != c.status || n.ID != "R.99" || n.OK != c.ok || n.Of != c.of {
			t.Errorf("%d/%d ladder %v: status %s count %+v, want %s", c.ok, c.of, c.ladder, res.Status, n, c.status)
			continue
		}
		if res.Passed != (c.status == report.Pass) || (res.Recommendation != "") != (c.status == report.Partial || c.status == report.Fail) {
			t.Errorf("%d/%d: passed %v recommendation %q", c.ok, c.of, res.Passed, res.Recommendation)
		}
		if c.status == report.NA {
			if res.Message != "nothing to judge here" || len(res.Details) != 0 {
				t.Errorf("na: message %q details %s", res.Message, res.Details)
			}
			continue
		}
		var d readDetails
		if err := json.Unmarshal(res.Details, &d); err != nil {
			t.Fatalf("details %s: %v", res.Details, err)
		}
		if d.OK != c.ok || d.Of != c.of || d.Percent != c.percent || d.Failing == nil || len(d.Failing) != min(c.of-c.ok, maxListed) {
			t.Errorf("%d/%d: details %s", c.ok, c.of, res.Details)
		}
		if !strings.Contains(string(res.Details), `"failing":[`) {
			t.Errorf("%d/%d: failing is not a list: %s", c.ok, c.of, res.Details)
		}
		if c.ok < c.of && !strings.Contains(res.Message, "broke") {
			t.Errorf("%d/%d: message %q does not say why the first page failed", c.ok, c.of, res.Message)
		}
	}
}

// At most maxListed failing pages are listed; the count keeps them all.
func TestReadCheckJudgeCapsFailing(t *testing.T) {
	o := ReadOutcome{Of: 80}
	for i := 0; i < 80; i++ {
		o.Failed = append(o.Failed, PageWhy{URL: "https://a.example/p", Why: "x"})
	}
	rc := &ReadCheck{Definition: Definition{ID: "R.98"}, Run: func(gather.Source) ReadOutcome { return o }}
	res, n := rc.Judge(sampleSet(&gather.ReadDoc{}, false))
	var d readDetails
	json.Unmarshal(res.Details, &d)
	if len(d.Failing) != maxListed || d.Of != 80 || n.Of != 80 || res.Status != report.Fail || !strings.Contains(res.Message, "and 79 more") {
		t.Errorf("failing %d of %d, message %q", len(d.Failing), d.Of, res.Message)
	}
}

func TestReadCheckJudgeMissingInputAndPanic(t *testing.T) {
	rc := &ReadCheck{Definition: Definition{ID: "R.97"}, Requires: needs(gather.ReadSample, gather.Feed), Run: func(gather.Source) ReadOutcome { return ReadOutcome{OK: 1, Of: 1} }}
	res, n := rc.Judge(sampleSet(&gather.ReadDoc{}, false))
	if res.Status != report.Fail || !strings.Contains(res.Message, "not gathered") || n.Of != 0 {
		t.Errorf("missing input: %s %q %+v", res.Status, res.Message, n)
	}
	rc = &ReadCheck{Definition: Definition{ID: "R.96"}, Requires: readNeeds, Run: func(gather.Source) ReadOutcome { panic("boom") }}
	res, n = rc.Judge(sampleSet(&gather.ReadDoc{}, false))
	if res.Status != report.Fail || !strings.Contains(res.Message, "boom") || n.ID != "R.96" || n.Of != 0 {
		t.Errorf("panic: %s %q %+v", res.Status, res.Message, n)
	}
}

// The read checks over a hand-made sample: each counts the pages it
// applies to, and R.8 adds the missing-page probe.
func TestReadChecksOverSample(t *testing.T) {
	good := "<title>Guide</title><main><h1>Guide</h1><p>" + nWords(120, "g") + " see /llms.txt</p></main>"
	mk := func(path string, html string, h http.Header) *gather.ReadPage {
		p := readPage("https://a.example"+path, 200, html)
		p.HTML.Header = h
		p.HTML.Header.Set("Content-Type", "text/html")
		return p
	}
	pages := []*gather.ReadPage{
		mk("/docs/a", good, hdr("ETag", `"a"`)),
		mk("/docs/b", good, hdr("Cache-Control", "max-age=60")),
		mk("/docs/c", "<title>Page not found</title>"+good, hdr()),
		mk("/docs/d", `<title>App</title><script src=/app.js></script><div id=root></div>`, hdr("Cache-Control", "no-cache")),
	}
	pages[0].Twin = &fetch.Response{Status: 200, Body: []byte("Guide " + nWords(120, "g")), Header: hdr("Content-Type", "text/markdown")}
	pages[0].LlmsLink, pages[0].From = pages[0].TwinURL, "llms.txt"
	pages[1].LlmsLink, pages[1].From = pages[1].URL, "llms.txt"
	doc := &gather.ReadDoc{Limit: 10, Pages: pages,
		Missing:   &fetch.Response{RequestURL: "https://a.example/docs/a-agentready-missing-00", Status: 200},
		Sitemap:   []string{"https://a.example/docs/a", "https://a.example/docs/b", "https://a.example/docs/c", "https://a.example/docs/d"},
		LlmsLinks: []string{"https://a.example/docs/a.md", "https://a.example/docs/b/"}}
	set := sampleSet(doc, true)
	want := map[string][2]int{ // ok, of
		"R.1":  {4, 4},
		"R.2":  {1, 1},
		"R.4":  {3, 4},
		"R.5":  {1, 4},
		"R.7":  {1, 1},
		"R.8":  {3, 5}, // /docs/c is a soft 404; the missing page answered 200
		"R.9":  {4, 4},
		"R.10": {3, 4},
		"R.11": {2, 2},
		"R.12": {2, 4},
		"R.13": {3, 4},
	}
	for id, w := range want {
		c, ok := ReadByID(id)
		if !ok {
			t.Fatalf("%s missing", id)
		}
		_, n := c.Judge(set)
		if n.OK != w[0] || n.Of != w[1] {
			t.Errorf("%s: %d of %d, want %d of %d", id, n.OK, n.Of, w[0], w[1])
		}
	}
	// Without llms.txt, R.12 and R.13 are na (R.11 judges the pages the
	// sample took from llms.txt, whatever became of the file).
	noLlms := sampleSet(doc, false)
	for _, id := range []string{"R.12", "R.13"} {
		c, _ := ReadByID(id)
		if res, _ := c.Judge(noLlms); res.Status != report.NA {
			t.Errorf("%s without llms.txt: %s", id, res.Status)
		}
	}
	// An empty sample is na for every page check, with the reason.
	empty := sampleSet(&gather.ReadDoc{Limit: 10}, false)
	off := sampleSet(&gather.ReadDoc{Limit: 0}, false)
	for _, c := range Read() {
		res, n := c.Judge(empty)
		if res.Status != report.NA || n.Of != 0 || res.Message == "" {
			t.Errorf("%s on an empty sample: %s %q", c.ID, res.Status, res.Message)
		}
	}
	c, ok := ReadByID("R.1")
	if !ok {
		t.Fatal("no R.1")
	}
	if res, _ := c.Judge(off); !strings.Contains(res.Message, "turned off") {
		t.Errorf("R.1 with the suite off: %q", res.Message)
	}
}

func TestReadCatalog(t *testing.T) {
	if len(Read()) != 20 {
		t.Fatalf("%d read checks, want 20", len(Read()))
	}
	for i, c := range Read() {
		if want := "R." + strconv.Itoa(i+1); c.ID != want || c.Category != report.ReadGroup || c.Name == "" || c.Rule == "" || c.Fix == "" || c.LooksFor == "" || c.Effort.Rank() == 2 && c.Effort != Large {
			t.Errorf("read check %d: %+v", i, c.Definition)
		}
	}
	if _, ok := ReadByID("R.21"); ok {
		t.Error("R.21 exists")
	}
}

func TestMarkdownFacts(t *testing.T) {
	cases := []struct {
		name     string
		md       string
		heading  string // part of HeadingProblem's answer; "" for none
		relative int
	}{
		{"absolute links, distinct headings", "# Guide\n\n## Install\n\nSee [API](https://a.example/api) and [top](#guide).\n\n## Configure\n", "", 0},
		{"root-relative and path-relative links", "# G\n\n[a](/docs/a) [b](../b.md) [c](c.md) [d](https://a.example/d)\n", "", 3},
		{"no headings", "Just text with [a](https://a.example).\n", "no headings", 0},
		{"a repeated generic heading", "# API\n\n## Example\n\nx\n\n## Example\n\ny\n", "repeats the heading “Example”", 0},
		{"a repeated specific heading is fine", "# API\n\n## Create an invoice\n\n## Create an invoice\n", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := markdown.Parse([]byte(c.md))
			if got := HeadingProblem(d); (got == "") != (c.heading == "") || !strings.Contains(got, c.heading) {
				t.Errorf("HeadingProblem = %q, want %q", got, c.heading)
			}
			if n, _ := RelativeLinks(d); n != c.relative {
				t.Errorf("RelativeLinks = %d, want %d", n, c.relative)
			}
		})
	}
}

func TestTabProblem(t *testing.T) {
	md := func(body string) *fetch.Response {
		return &fetch.Response{Status: 200, Body: []byte(body), Header: hdr("Content-Type", "text/markdown")}
	}
	tabs := `<main><h1>Install</h1><div role="tabpanel"><p>brew install lantern command line tool</p></div>` +
		`<div role="tabpanel" hidden><p>apt install lantern package repository key</p></div></main>`
	cases := []struct {
		name string
		html string
		md   *fetch.Response
		want string
	}{
		{"panels in the HTML, no markdown", tabs, nil, ""},
		{"every panel in the markdown", tabs, md("# Install\n## Homebrew\nbrew install lantern command line tool\n## apt\napt install lantern package repository key\n"), ""},
		{"the hidden panel left out of the markdown", tabs, md("# Install\nbrew install lantern command line tool\n"), "1 tab panel of 2 whose content its markdown leaves out"},
		{"an empty panel a script fills", `<main><h1>Clients</h1><div role="tabpanel" data-src="/x"></div><div role="tabpanel"><p>pip install</p></div></main>`, nil, "1 tab panel of 2 with no text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := readPage("https://a.example/docs/install", 200, c.html)
			p.Twin = c.md
			if got := TabProblem(p); (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("TabProblem = %q, want %q", got, c.want)
			}
		})
	}
}

func TestBotChallengeAndThousands(t *testing.T) {
	for body, want := range map[string]bool{
		"<html><title>Just a moment...</title><script src=/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1></script>": true,
		`<div class="g-recaptcha" data-sitekey="x"></div>`:                                                               true,
		"<title>Just in time scheduling</title><p>A guide.</p>":                                                          false,
	} {
		if got := botChallenge.MatchString(body); got != want {
			t.Errorf("botChallenge(%q) = %v, want %v", body, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 30432: "30,432", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// Two listed URLs that answer with one page (an llms.txt link that
// redirects to the page the sitemap lists) are one page for the checks of
// the page, and two for the checks of how each listed URL answers.
func TestOnePageListedTwice(t *testing.T) {
	final := "https://a.example/docs/quickstart"
	direct := readPage(final, 200, "<main><h1>Q</h1></main>")
	viaLlms := readPage("https://a.example/guides/quickstart", 200, "<main><h1>Q</h1></main>", final)
	viaLlms.LlmsLink = viaLlms.URL
	for _, p := range []*gather.ReadPage{direct, viaLlms} {
		p.HTML.FinalURL = final
	}
	set := sampleSet(&gather.ReadDoc{Limit: 10, Pages: []*gather.ReadPage{viaLlms, direct}}, true)
	for id, want := range map[string]int{"R.4": 1, "R.9": 2} {
		c, _ := ReadByID(id)
		if _, n := c.Judge(set); n.Of != want {
			t.Errorf("%s judged %d pages, want %d", id, n.Of, want)
		}
	}
}
