package edge

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xhtml "golang.org/x/net/html"

	"github.com/agentready/agentready/edge/badge"
)

// A report the origin sends and the url a visitor typed are data, never
// markup: whatever they hold, the page keeps exactly its own two scripts
// (JSON-LD and app.js) and its one h1, and rendering never panics.
func FuzzReportPage(f *testing.F) {
	f.Add([]byte(`{"url":"https://example.com/","score":{"value":90,"grade":"A","levelName":"Optimized"},"currentLevel":3,"levels":[{"level":{"number":1,"name":"Discoverable"},"passed":1,"total":1}],"checks":[{"id":"1.1","name":"llms.txt","status":"fail","level":1,"message":"m","recommendation":"add `+"`llms.txt`"+`","details":"{\"a\":1}"}]}`), "example.com")
	f.Add([]byte(`{"url":"</script><script>alert(1)</script>","checks":[{"id":"\"><h1>x","name":"<script>","status":"<b>","level":1,"message":"`+"`</code><script>`"+`","foundAt":"<img src=x onerror=alert(1)>","details":"</pre><script>"}],"levels":[{"level":{"number":1,"name":"<h1>"}}]}`), `"><script>alert(1)</script>`)
	f.Add([]byte(`{"url":"https://x.example/","checks":[{"id":"1.1","status":"fail","level":1,"message":"</script>"}],"levels":[{"level":{"number":1,"name":"<b>"},"total":1}],"plan":{"targetLevel":1,"passesNeeded":1,"needs":[{"level":1,"passes":1}],"recommendations":[{"rank":1,"id":"<script>","name":"</pre>","status":"fail","effort":"<i>","blocking":true,"fix":"`+"`</code>`"+`","snippet":"</code></pre><script>alert(1)</script>"}]},"previous":{"score":-5,"grade":"<h1>","newlyPassing":[{"id":"\"><script>","name":"x","from":"<","to":">","message":"</li>"}]},"history":[{"score":500,"grade":"</svg><script>"},{"score":-20}]}`), "failed")
	f.Fuzz(func(t *testing.T, raw []byte, target string) {
		var rep pageReport
		if json.Unmarshal(raw, &rep) != nil || len(rep.Checks) == 0 {
			return
		}
		page := strings.ToLower(string(reportHTML("https://agentready.example", target, &rep, "", checkFilter(target))))
		if n := strings.Count(page, "<script"); n != 2 {
			t.Fatalf("%d script elements in the page, want 2", n)
		}
		if n := strings.Count(page, "<h1"); n != 1 {
			t.Fatalf("%d h1 elements, want 1", n)
		}
		if n := strings.Count(page, "</script>"); n != 2 {
			t.Fatalf("%d script end tags, want 2", n)
		}
		empty := strings.ToLower(string(reportHTML("https://agentready.example", target, nil, "note", "all")))
		if strings.Count(empty, "<script") != 2 || strings.Count(empty, "<h1") != 1 {
			t.Fatal("the no-report page lets markup through")
		}
		reportMarkdown("https://agentready.example", target, &rep, "")
	})
}

// Starter fills placeholders in one pass and refuses what is not a website.
func TestStarter(t *testing.T) {
	for _, c := range []struct{ snippet, site, want string }{
		{"Sitemap: {origin}/sitemap.xml", "https://www.acme.example:8443/x", "Sitemap: https://www.acme.example:8443/sitemap.xml"},
		{"{name} {slug} {reverse}", "https://www.acme.example/", "acme.example acme-example example.acme"},
		{"{reverse}", "http://127.0.0.1:8080", "127.0.0.1"},
		{"{name}", "https://{origin}.example/", ""},
		{"{name}", "ftp://x.example/", ""},
		{"no placeholders", "not a url", "no placeholders"},
	} {
		if got := Starter(c.snippet, c.site); got != c.want {
			t.Errorf("Starter(%q, %q) = %q, want %q", c.snippet, c.site, got, c.want)
		}
	}
}

// esc is html.EscapeString without the package (see htmlEscaper).
func FuzzEscape(f *testing.F) {
	f.Add(`<a href="x">'&'</a>`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := esc(s), html.EscapeString(s); got != want {
			t.Fatalf("esc(%q) = %q, html.EscapeString gives %q", s, got, want)
		}
	})
}

// reportPlatform answers /api/report with a fixture report and keeps the
// edge cache, counting what reaches the origin.
type reportPlatform struct {
	fakePlatform
	report []byte
	reads  int
	cache  map[string][]byte
}

func (p *reportPlatform) Fetch(_ context.Context, r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/api/report" {
		return nil, errors.New("no origin")
	}
	p.reads++
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(p.report))}, nil
}
func (p *reportPlatform) CacheGet(k string) ([]byte, bool) { v, ok := p.cache[k]; return v, ok }
func (p *reportPlatform) CachePut(k string, v []byte, _ time.Duration) {
	p.cache[k] = v
}

// fixtureReport is testdata/report-<name>.json: a real scan of the fixture
// site of that name (peer: every kind of verdict and a previous scan with a
// history; empty: levels 2 and 3 with nothing applicable), with the plan
// `agentready scan --recommend --json` gives for it, as /api/report sends it.
func fixtureReport(t *testing.T, name string) ([]byte, *pageReport) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "report-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep pageReport
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Checks) != 48 || rep.Plan == nil {
		t.Fatalf("testdata/report-%s.json: %v", name, err)
	}
	return raw, &rep
}

// doc is a parsed page with the few queries the tests need.
type dom struct{ root *xhtml.Node }

func parsePage(t *testing.T, b []byte) dom {
	t.Helper()
	n, err := xhtml.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return dom{n}
}

func attr(n *xhtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *xhtml.Node, c string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), c)
}

// all is every element under n (n included) that match accepts, in document order.
func all(n *xhtml.Node, match func(*xhtml.Node) bool) []*xhtml.Node {
	var out []*xhtml.Node
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func (d dom) byID(t *testing.T, id string) *xhtml.Node {
	t.Helper()
	found := all(d.root, func(n *xhtml.Node) bool { v, _ := attr(n, "id"); return v == id })
	if len(found) != 1 {
		t.Fatalf("%d elements with id %q, want 1", len(found), id)
	}
	return found[0]
}

func text(n *xhtml.Node) string {
	var b strings.Builder
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func tagClass(tag, class string) func(*xhtml.Node) bool {
	return func(n *xhtml.Node) bool { return n.Data == tag && (class == "" || hasClass(n, class)) }
}

func (p *reportPlatform) page(t *testing.T, h *Handler, query string, hdr ...string) (int, []byte) {
	t.Helper()
	w := serve(h, "GET", "https://agentready.example/report?url="+url.QueryEscape("https://www.peer.example/")+query, "", hdr...)
	return w.Code, w.Body.Bytes()
}

// The first screen of a report: the gauge shows the score and grade as
// text, the level and the ladder of four levels, Fix next the plan's first
// steps in the plan's order with their effort, what they count toward and
// their starter in view, and the thumbnail's place beside the summary.
func TestReportFirstScreen(t *testing.T) {
	raw, rep := fixtureReport(t, "peer")
	p := &reportPlatform{report: raw, cache: map[string][]byte{}}
	h := New(Config{BaseURL: "https://agentready.example"}, p)
	code, body := p.page(t, h, "")
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	d := parsePage(t, body)
	gauge := d.byID(t, "gauge")
	if got := text(gauge); got != strconv.Itoa(rep.Score.Value)+" out of 100, grade "+rep.Score.Grade {
		t.Errorf("the gauge reads %q", got)
	}
	if len(all(gauge, tagClass("svg", ""))) != 1 {
		t.Error("the gauge has no SVG ring")
	}
	if got, want := text(d.byID(t, "level-reached")), "○ No level reached yet"; got != want {
		t.Errorf("level: %q, want %q", got, want)
	}
	rungs := all(d.byID(t, "ladder"), tagClass("li", ""))
	if len(rungs) != 4 {
		t.Fatalf("%d levels in the ladder, want 4", len(rungs))
	}
	for i, l := range rep.Levels {
		want := strconv.Itoa(l.Passed) + " of " + strconv.Itoa(l.Total-l.NA) + " passed"
		if got := text(rungs[i]); !strings.Contains(got, want) || !strings.Contains(got, l.Level.Name) {
			t.Errorf("ladder rung %d reads %q, want %q", i+1, got, want)
		}
	}
	if _, ok := attr(d.byID(t, "shot"), "hidden"); !ok {
		t.Error("the thumbnail is shown before there is one (app.js shows it once it loads)")
	}

	steps := all(d.byID(t, "fix-next"), tagClass("li", "step"))
	if len(steps) != fixNextSteps {
		t.Fatalf("Fix next shows %d steps, want %d", len(steps), fixNextSteps)
	}
	for i, li := range steps {
		want := rep.Plan.Steps[i]
		id, _ := attr(li, "data-id")
		got := text(li)
		if id != want.ID {
			t.Errorf("step %d is %s, the plan's is %s", i+1, id, want.ID)
		}
		for _, part := range []string{want.Name, want.Effort + " effort", "toward level " + strconv.Itoa(rep.Plan.TargetLevel), statusWords[want.Status]} {
			if !strings.Contains(got, part) {
				t.Errorf("step %d (%s) lacks %q: %q", i+1, want.ID, part, got)
			}
		}
		code := all(li, tagClass("code", ""))
		if want.Snippet == "" || len(code) == 0 || !strings.Contains(string(body), "<code>"+esc(want.Snippet)+"</code></pre>") {
			t.Errorf("step %d (%s) does not show its starter", i+1, want.ID)
		}
		if len(all(li, tagClass("details", ""))) != 0 {
			t.Errorf("step %d hides something behind a details element", i+1)
		}
	}
	if more := text(all(d.root, tagClass("p", "more"))[0]); !strings.HasPrefix(more, strconv.Itoa(len(rep.Plan.Steps)-fixNextSteps)+" more fixes") {
		t.Errorf("the rest of the plan: %q", more)
	}
}

// A level with nothing applicable says so, never "0 of 0", on the page and
// in its markdown twin; a site that passes everything has nothing to fix.
func TestReportNotApplicableLevel(t *testing.T) {
	raw, rep := fixtureReport(t, "empty")
	p := &reportPlatform{report: raw, cache: map[string][]byte{}}
	h := New(Config{BaseURL: "https://agentready.example"}, p)
	_, body := p.page(t, h, "")
	_, md := p.page(t, h, "", "Accept", "text/markdown")
	for _, b := range [][]byte{body, md} {
		if bytes.Contains(b, []byte("0 of 0")) {
			t.Errorf("the page says 0 of 0: %.200s", b)
		}
	}
	rungs := all(parsePage(t, body).byID(t, "ladder"), tagClass("li", ""))
	for i, l := range rep.Levels {
		na := strings.Contains(text(rungs[i]), "not applicable to this site")
		if (l.Total == l.NA) != na || (na && len(all(rungs[i], tagClass("svg", "bar"))) != 0) {
			t.Errorf("level %d (%d of %d not applicable): %q", l.Level.Number, l.NA, l.Total, text(rungs[i]))
		}
		if l.Total == l.NA && !bytes.Contains(md, []byte("## Level "+strconv.Itoa(l.Level.Number)+" · "+l.Level.Name+" (not applicable to this site)")) {
			t.Errorf("markdown: level %d is not said to be not applicable", l.Level.Number)
		}
	}

	rep.Plan.Steps, rep.Plan.TargetLevel = nil, 0
	var out strings.Builder
	writeFixNext(&out, rep)
	if !strings.Contains(out.String(), "Nothing to fix") {
		t.Errorf("an empty plan: %s", out.String())
	}
}

// The checks by level, failed and partial first; each row shows its message
// without opening. ?filter= is rendered by the edge (no JavaScript needed):
// every check stays in the page, those of other verdicts hidden, levels
// with none hidden, the current filter marked; an unknown filter shows all.
func TestReportFilter(t *testing.T) {
	raw, rep := fixtureReport(t, "peer")
	p := &reportPlatform{report: raw, cache: map[string][]byte{}}
	h := New(Config{BaseURL: "https://agentready.example"}, p)
	count := map[string]int{}
	for _, c := range rep.Checks {
		count[c.Status]++
	}
	for _, f := range append(checkFilters, struct{ key, status, word string }{"bogus", "", "All"}) {
		_, body := p.page(t, h, "&filter="+f.key)
		d := parsePage(t, body)
		rows := all(d.byID(t, "checks"), tagClass("li", "check"))
		if len(rows) != 48 {
			t.Fatalf("filter %s: %d rows, want all 48 in the page", f.key, len(rows))
		}
		shown := 0
		for _, li := range rows {
			st, _ := attr(li, "data-status")
			_, hidden := attr(li, "hidden")
			if hidden == (f.status == "" || st == f.status) {
				id, _ := attr(li, "id")
				t.Errorf("filter %s: %s (%s) hidden=%v", f.key, id, st, hidden)
			}
			if !hidden {
				shown++
			}
		}
		want := 48
		if f.status != "" {
			want = count[f.status]
		}
		if shown != want {
			t.Errorf("filter %s shows %d checks, want %d", f.key, shown, want)
		}
		cur := all(d.root, func(n *xhtml.Node) bool { v, _ := attr(n, "aria-current"); return n.Data == "a" && v == "page" })
		if k, _ := attr(cur[0], "data-filter"); len(cur) != 1 || k != checkFilter(f.key) {
			t.Errorf("filter %s: the current filter is marked on %q", f.key, k)
		}
		for _, sec := range all(d.byID(t, "checks"), tagClass("section", "level")) {
			_, hidden := attr(sec, "hidden")
			visible := 0
			for _, li := range all(sec, tagClass("li", "check")) {
				if _, h := attr(li, "hidden"); !h {
					visible++
				}
			}
			if hidden != (visible == 0) {
				id, _ := attr(sec, "id")
				t.Errorf("filter %s: %s hidden=%v with %d visible checks", f.key, id, hidden, visible)
			}
		}
		if f.key != "all" {
			continue
		}
		// Failed, then partial, then passed, then not applicable, in each level.
		for _, sec := range all(d.byID(t, "checks"), tagClass("section", "level")) {
			last := -1
			for _, li := range all(sec, tagClass("li", "check")) {
				st, _ := attr(li, "data-status")
				if statusRank[st] < last {
					id, _ := attr(sec, "id")
					t.Errorf("%s: a %s check after a worse-ranked one", id, st)
				}
				last = statusRank[st]
				msgs := all(li, tagClass("span", "msg"))
				id, _ := attr(li, "id")
				c := rep.check(strings.TrimPrefix(id, "check-"))
				if len(msgs) != 1 || msgs[0].Parent.Data != "summary" || text(msgs[0]) != strings.Join(strings.Fields(strings.ReplaceAll(c.Message, "`", "")), " ") {
					t.Errorf("%s: the message is not in the row's summary", id)
				}
			}
		}
	}
	if p.reads != 1 {
		t.Errorf("the origin was read %d times for one report in five filters, want 1", p.reads)
	}
}

func (rep *pageReport) check(id string) pageCheck {
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	return pageCheck{}
}

// What changed since the last scan: a sparkline with a point per scan (its
// date in its title) and the same dates in text, and the diff, on the page
// and in its markdown twin; without a previous scan the section is absent.
func TestReportChanges(t *testing.T) {
	raw, rep := fixtureReport(t, "peer")
	p := &reportPlatform{report: raw, cache: map[string][]byte{}}
	h := New(Config{BaseURL: "https://agentready.example"}, p)
	_, body := p.page(t, h, "")
	d := parsePage(t, body)
	points := all(d.byID(t, "sparkline"), tagClass("circle", ""))
	if len(points) != len(rep.History) {
		t.Fatalf("%d points in the sparkline, want %d", len(points), len(rep.History))
	}
	changes := text(d.byID(t, "changes"))
	for i, pt := range rep.History {
		date := pt.Timestamp.UTC().Format("2 Jan 2006 15:04 UTC")
		if got := text(points[i]); got != date+": "+strconv.Itoa(pt.Score)+" ("+pt.Grade+")" {
			t.Errorf("point %d: title %q", i, got)
		}
		if !strings.Contains(changes, date+": "+strconv.Itoa(pt.Score)) {
			t.Errorf("scan of %s is not listed in text", date)
		}
	}
	items := all(d.byID(t, "diff"), tagClass("li", ""))
	var got []string
	for _, li := range items {
		k, _ := attr(li, "data-change")
		got = append(got, k+" "+text(all(li, tagClass("a", ""))[0]))
	}
	pr := rep.Previous
	want := []string{"passing " + pr.NewlyPassing[0].ID + " " + pr.NewlyPassing[0].Name, "failing " + pr.NewlyFailing[0].ID + " " + pr.NewlyFailing[0].Name, "changed " + pr.Changed[0].ID + " " + pr.Changed[0].Name}
	if !slices.Equal(got, want) {
		t.Errorf("diff %q, want %q", got, want)
	}
	if !strings.Contains(changes, "scored "+strconv.Itoa(pr.Score)) || !strings.Contains(changes, "+"+strconv.Itoa(rep.Score.Value-pr.Score)) {
		t.Errorf("the score change is not said: %q", changes)
	}

	_, md := p.page(t, h, "", "Accept", "text/markdown")
	for _, w := range []string{"## Fix next", "1. **" + rep.Plan.Steps[0].ID + " ", "   " + strings.Split(rep.Plan.Steps[0].Snippet, "\n")[1], "## Since the last scan",
		"- Newly passing: **" + pr.NewlyPassing[0].ID, "- Newly failing: **" + pr.NewlyFailing[0].ID, "- Changed: **" + pr.Changed[0].ID,
		"- " + rep.History[0].Timestamp.UTC().Format(time.RFC3339) + ": " + strconv.Itoa(rep.History[0].Score)} {
		if !bytes.Contains(md, []byte(w)) {
			t.Errorf("the markdown twin lacks %q", w)
		}
	}

	var bare map[string]any
	json.Unmarshal(raw, &bare)
	delete(bare, "previous")
	delete(bare, "history")
	raw, _ = json.Marshal(bare)
	p2 := &reportPlatform{report: raw, cache: map[string][]byte{}}
	_, body = p2.page(t, New(Config{BaseURL: "https://agentready.example"}, p2), "")
	if bytes.Contains(body, []byte(`id="changes"`)) {
		t.Error("a report without a previous scan shows what changed")
	}
}

// The page's weight before a report (the homepage, its stylesheet and its
// script, gzip -6 together) stays within 20 KB.
func TestPageWeight(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, f := range []string{"index.html", "app.css", "app.js"} {
		b, err := siteFS.ReadFile("site/" + f)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(bytes.ReplaceAll(b, []byte("{{BASE}}"), []byte("https://agentready.example")))
	}
	zw.Close()
	t.Logf("homepage, app.css and app.js: %d bytes gzip", buf.Len())
	if buf.Len() > 20<<10 {
		t.Errorf("the page weighs %d bytes gzip before a report, over 20 KB", buf.Len())
	}
}

// One identity: the stylesheet's level colours and ink are the badge's, and
// every page carries the same header, footer and icons.
func TestVisualIdentity(t *testing.T) {
	css, _ := siteFS.ReadFile("site/app.css")
	for i, c := range badge.LevelColors {
		if !bytes.Contains(css, []byte("--l"+strconv.Itoa(i)+":"+c+";")) {
			t.Errorf("app.css does not colour level %d with the badge's %s", i, c)
		}
	}
	if !bytes.Contains(css, []byte("--ink:"+badge.LabelColor+";")) {
		t.Errorf("app.css's ink is not the badge's label colour %s", badge.LabelColor)
	}
	const base = "https://agentready.example"
	p := &reportPlatform{cache: map[string][]byte{}}
	h := New(Config{BaseURL: base}, p)
	p.report, _ = fixtureReport(t, "peer")
	for _, path := range []string{"/", "/docs", "/how-we-score", "/report?url=www.peer.example"} {
		b := serve(h, "GET", base+path, "", "Accept", "text/html").Body.String()
		for _, part := range []string{siteHeader, siteFooter, `<link rel="icon" href="/favicon.ico"`, `<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">`} {
			if !strings.Contains(b, part) {
				t.Errorf("%s lacks %.80q", path, part)
			}
		}
	}
	for _, c := range []struct{ path, ctype string }{{"/favicon.ico", "image/x-icon"}, {"/assets/icon.svg", "image/svg+xml"}} {
		w := serve(h, "GET", base+c.path, "")
		if w.Code != 200 || w.Header().Get("Content-Type") != c.ctype || w.Header().Get("Cache-Control") != "public, max-age=86400" || w.Header().Get("ETag") == "" {
			t.Errorf("%s: %d %v", c.path, w.Code, w.Header())
		}
		if r := serve(h, "GET", base+c.path, "", "If-None-Match", w.Header().Get("ETag")); r.Code != 304 {
			t.Errorf("%s: revalidation %d", c.path, r.Code)
		}
	}
}
