package stack_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// pageEnv gives anonymous callers three scans a day, so a test can see what
// a page view spends (nothing) against what a scan spends (one).
func pageEnv(k string) string {
	return map[string]string{"AGENTREADY_FREE_DAILY": "3", "AGENTREADY_TOKEN_KEYS": "k1:0123456789abcdef0123456789abcdef"}[k]
}

func remaining(t *testing.T, resp *http.Response) int {
	t.Helper()
	n, err := strconv.Atoi(resp.Header.Get("RateLimit-Remaining"))
	if err != nil {
		t.Fatalf("no RateLimit-Remaining on %s: %v", resp.Request.URL.Path, resp.Header)
	}
	return n
}

var (
	scoreRe  = regexp.MustCompile(`id="score-value">(\d+)<`)
	checkRe  = regexp.MustCompile(`<li class="check (pass|partial|fail|na)" id="check-([0-9.]+)"`)
	ldRe     = regexp.MustCompile(`(?s)<script type="application/ld\+json">(.*?)</script>`)
	canonRe  = regexp.MustCompile(`<link rel="canonical" href="([^"]+)">`)
	h1Re     = regexp.MustCompile(`<h1[ >]`)
	detailRe = regexp.MustCompile(`(?s)<li class="check fail" id="check-([0-9.]+)".*?</li>`)
)

// The result page is rendered by the edge from the origin's cached report:
// before a scan it says there is none (404), after one it shows the same
// score as the JSON API, all 48 checks grouped by level, each failed check
// with its recommendation, and it never spends the allowance.
func TestResultPage(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	s := site(t, "full")
	q := url.QueryEscape(s.URL)

	resp, b := testenv.Get(t, svc.URL+"/report?url="+q)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "no recent report") || scoreRe.Match(b) {
		t.Fatalf("before a scan: %d %.400s", resp.StatusCode, b)
	}
	resp, b = testenv.Get(t, svc.URL+"/api/report?url="+q)
	var env report.ErrorEnvelope
	if resp.StatusCode != 404 || json.Unmarshal(b, &env) != nil || env.Code != "not_found" || remaining(t, resp) != 3 {
		t.Fatalf("/api/report before a scan: %d %s", resp.StatusCode, b)
	}

	resp, b = testenv.Get(t, svc.URL+"/api/scan?format=json&url="+q)
	var rep report.Result
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil || len(rep.Checks) != 48 {
		t.Fatalf("scan: %d %.300s", resp.StatusCode, b)
	}

	for _, path := range []string{"/?url=", "/report?url="} {
		resp, b = testenv.Get(t, svc.URL+path+q)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(resp.Header.Get("Vary"), "Accept") {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, resp.Header)
		}
		m := scoreRe.FindSubmatch(b)
		if m == nil || string(m[1]) != strconv.Itoa(rep.Score.Value) {
			t.Errorf("%s: score %q, the JSON report says %d", path, m, rep.Score.Value)
		}
		checks := checkRe.FindAllSubmatch(b, -1)
		if len(checks) != 48 {
			t.Errorf("%s: %d checks rendered, want 48", path, len(checks))
		}
		for _, c := range checks {
			want, _ := rep.Check(string(c[2]))
			if string(want.Status) != string(c[1]) {
				t.Errorf("%s: check %s rendered %s, report says %s", path, c[2], c[1], want.Status)
			}
		}
		if n := len(h1Re.FindAll(b, -1)); n != 1 {
			t.Errorf("%s: %d h1 elements", path, n)
		}
		if m := canonRe.FindSubmatch(b); m == nil || string(m[1]) != svc.URL+"/report?url="+url.QueryEscape(rep.URL) {
			t.Errorf("%s: canonical %q", path, m)
		}
		ld := ldRe.FindSubmatch(b)
		var graph map[string]any
		if ld == nil || json.Unmarshal(ld[1], &graph) != nil || graph["@type"] != "WebPage" {
			t.Errorf("%s: JSON-LD %q", path, ld)
		}
		for _, want := range []string{"grade <strong id=\"score-grade\">" + rep.Score.Grade + "<", "Level ladder", "/api/badge?url=", "class=\"copy\""} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s: no %q", path, want)
			}
		}
	}
	// Each failed check carries its message and recommendation in the HTML.
	failed := 0
	for _, m := range detailRe.FindAllSubmatch(b, -1) {
		c, _ := rep.Check(string(m[1]))
		failed++
		if !strings.Contains(string(m[0]), "Recommendation:") || !strings.Contains(string(m[0]), firstWords(c.Message)) {
			t.Errorf("failed check %s lacks its message or recommendation: %.500s", m[1], m[0])
		}
	}
	if want := rep.Score.Failed; failed != want {
		t.Errorf("%d failed checks rendered, the report has %d", failed, want)
	}

	// The identity and commerce signals are listed apart, under their own heading.
	if !bytes.Contains(b, []byte(`id="signals-h">Identity and commerce (not scored)`)) || len(rep.Signals) == 0 {
		t.Errorf("no signals section (the report has %d signals)", len(rep.Signals))
	}
	for _, sg := range rep.Signals {
		if !bytes.Contains(b, []byte(`id="check-`+sg.ID+`" data-status="`+string(sg.Status)+`"`)) {
			t.Errorf("signal %s (%s) is not rendered", sg.ID, sg.Status)
		}
	}

	resp, b = testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/markdown")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") || !strings.Contains(string(b), "Score **"+strconv.Itoa(rep.Score.Value)+"/100**") || strings.Contains(string(b), "<html") ||
		!strings.Contains(string(b), "## Identity and commerce (not scored)") {
		t.Errorf("markdown report: %q %.300s", resp.Header.Get("Content-Type"), b)
	}
	// Page views and report reads spent nothing: only the scan did.
	resp, _ = testenv.Get(t, svc.URL+"/api/report?url="+q)
	if resp.StatusCode != 200 || remaining(t, resp) != 2 {
		t.Errorf("after one scan and several page views: %d, %s remaining (want 2)", resp.StatusCode, resp.Header.Get("RateLimit-Remaining"))
	}
}

func firstWords(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	if len(s) > 20 {
		s = s[:20]
	}
	return s
}

// Hostile input gets an honest page: escaped, bounded, never the bytes sent.
func TestResultPageHostileInput(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	resp, b := testenv.Get(t, svc.URL+"/report?url="+url.QueryEscape(`"><script>alert(1)</script>`))
	if bytes.Contains(b, []byte("<script>alert")) || resp.StatusCode == 200 || resp.StatusCode >= 500 {
		t.Errorf("markup in url: %d %.600s", resp.StatusCode, b)
	}
	long := strings.Repeat("a", 3000) + ".com"
	resp, b = testenv.Get(t, svc.URL+"/report?url="+long)
	if resp.StatusCode != 400 || !bytes.Contains(b, []byte("longer than 2048")) {
		t.Errorf("long url: %d %.300s", resp.StatusCode, b)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := client.Get(svc.URL + "/report")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 303 || r.Header.Get("Location") != "/" {
		t.Errorf("/report without url: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodPut, svc.URL+"/report?url=example.com", nil)
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT /report: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}

// The page's own weight before a report arrives: the homepage, its one
// stylesheet and its one script, gzip-compressed, stay under 100 KB; the
// assets are cacheable and revalidate.
func TestScanPageWeight(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range []struct{ path, ctype string }{{"/", "text/html"}, {"/assets/app.css", "text/css"}, {"/assets/app.js", "text/javascript"}} {
		resp, b := testenv.Get(t, svc.URL+p.path, "Accept", "text/html")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), p.ctype) {
			t.Fatalf("%s: %d %q", p.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if p.path != "/" {
			if r2, _ := testenv.Get(t, svc.URL+p.path, "If-None-Match", resp.Header.Get("ETag")); r2.StatusCode != 304 {
				t.Errorf("%s: revalidation %d", p.path, r2.StatusCode)
			}
		}
		zw.Write(b)
	}
	zw.Close()
	t.Logf("page weight before a report: %d bytes gzip", buf.Len())
	if buf.Len() > 100<<10 {
		t.Errorf("the page weighs %d bytes compressed, over 100 KB", buf.Len())
	}
}

// A failed check whose fix is one file shows that file filled in for the
// scanned site, as the engine's recommendations build it.
func TestResultPageStarters(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	s := site(t, "partial")
	q := url.QueryEscape(s.URL)
	resp, b := testenv.Get(t, svc.URL+"/api/scan?format=json&url="+q)
	var rep report.Result
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("scan: %d %.300s", resp.StatusCode, b)
	}
	_, page := testenv.Get(t, svc.URL+"/report?url="+q)
	shown := 0
	for _, c := range checks.Web() {
		res, _ := rep.Check(c.ID)
		starter := c.Starter(rep.URL)
		item := regexp.MustCompile(`(?s)<li class="check [a-z]+" id="check-` + regexp.QuoteMeta(c.ID) + `".*?</li>`).Find(page)
		has := strings.Contains(string(item), `<pre><code>`+html.EscapeString(starter)+`</code></pre>`)
		switch {
		case starter != "" && (res.Status == report.Fail || res.Status == report.Partial):
			if !has {
				t.Errorf("check %s (%s) has a starter the page does not show", c.ID, res.Status)
			}
			shown++
		case starter != "" && has:
			t.Errorf("check %s passed, yet the page offers its starter", c.ID)
		}
	}
	if shown == 0 {
		t.Fatal("the partial fixture fails no check that has a starter: the test shows nothing")
	}
	t.Logf("%d starters shown", shown)
}

// The generated pages are pages like the others: one h1, a canonical URL,
// JSON-LD, a markdown twin, and an llms.txt and sitemap entry. /how-we-score
// lists every web check of the catalog; /showcase ranks scanned sites.
func TestGeneratedPages(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	_, llms := testenv.Get(t, svc.URL+"/llms.txt")
	_, sitemap := testenv.Get(t, svc.URL+"/sitemap.xml")

	// The edge keeps the showcase a minute: the empty one is another service's.
	empty := start(t, stack.Options{Env: pageEnv})
	resp, b := testenv.Get(t, empty.URL+"/showcase")
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte("No site has been scanned yet")) {
		t.Fatalf("empty showcase: %d %.300s", resp.StatusCode, b)
	}
	s := site(t, "full")
	if resp, b := testenv.Get(t, svc.URL+"/api/scan?format=json&url="+url.QueryEscape(s.URL)); resp.StatusCode != 200 {
		t.Fatalf("scan: %d %.200s", resp.StatusCode, b)
	}
	var rep report.Result
	_, b = testenv.Get(t, svc.URL+"/api/report?url="+url.QueryEscape(s.URL))
	json.Unmarshal(b, &rep)

	for _, p := range []struct{ path, ldType string }{{"/how-we-score", "TechArticle"}, {"/showcase", "CollectionPage"}} {
		resp, b := testenv.Get(t, svc.URL+p.path, "Accept", "text/html")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(resp.Header.Get("Vary"), "Accept") {
			t.Fatalf("%s: %d %v", p.path, resp.StatusCode, resp.Header)
		}
		if n := len(h1Re.FindAll(b, -1)); n != 1 {
			t.Errorf("%s: %d h1 elements", p.path, n)
		}
		if m := canonRe.FindSubmatch(b); m == nil || string(m[1]) != svc.URL+p.path {
			t.Errorf("%s: canonical %q", p.path, m)
		}
		ld := ldRe.FindSubmatch(b)
		var graph map[string]any
		if ld == nil || json.Unmarshal(ld[1], &graph) != nil || graph["@type"] != p.ldType {
			t.Errorf("%s: JSON-LD %q", p.path, ld)
		}
		mresp, md := testenv.Get(t, svc.URL+p.path, "Accept", "text/markdown")
		if !strings.HasPrefix(mresp.Header.Get("Content-Type"), "text/markdown") || bytes.Contains(md, []byte("<html")) || !bytes.HasPrefix(md, []byte("# ")) {
			t.Errorf("%s as markdown: %q %.200s", p.path, mresp.Header.Get("Content-Type"), md)
		}
		if !bytes.Contains(llms, []byte(svc.URL+p.path+")")) || !bytes.Contains(sitemap, []byte("<loc>"+svc.URL+p.path+"</loc>")) {
			t.Errorf("%s is missing from llms.txt or sitemap.xml", p.path)
		}
		switch p.path {
		case "/how-we-score":
			for _, c := range checks.Web() {
				if !bytes.Contains(b, []byte(`id="check-`+c.ID+`"`)) || !bytes.Contains(md, []byte("**"+c.ID+" ")) {
					t.Errorf("/how-we-score lacks check %s", c.ID)
				}
			}
		case "/showcase":
			row := `<a href="` + html.EscapeString("/report?url="+url.QueryEscape(rep.URL)) + `">`
			if !bytes.Contains(b, []byte(row)) || !bytes.Contains(b, []byte("<td>"+strconv.Itoa(rep.Score.Value)+"</td>")) {
				t.Errorf("/showcase lacks the scanned site with score %d: %.2000s", rep.Score.Value, b)
			}
		}
	}
	if resp, b := testenv.Get(t, svc.URL+"/api/showcase?limit=500"); resp.StatusCode != 400 || !bytes.Contains(b, []byte("1 to 50")) {
		t.Errorf("/api/showcase?limit=500: %d %s", resp.StatusCode, b)
	}
}

// Without JavaScript the page's Scan button posts: one scan of the allowance,
// then a 303 to the result page (a reload does not scan again). Over the
// allowance the page explains it; another site's form cannot spend it.
func TestScanWithoutJavaScript(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv})
	s := site(t, "full")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(target string, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	q := url.QueryEscape(s.URL)
	_, b := testenv.Get(t, svc.URL+"/report?url="+q)
	if !bytes.Contains(b, []byte(`<form id="scan-now" method="post" action="`+html.EscapeString("/report?url="+q)+`">`)) {
		t.Fatalf("the no-report page has no scan button: %.1500s", b)
	}
	if resp, b := post(svc.URL+"/report?url="+q, "Origin", "https://evil.example"); resp.StatusCode != 403 || scoreRe.Match(b) {
		t.Errorf("cross-site post: %d", resp.StatusCode)
	}
	resp, _ := post(svc.URL + "/report?url=" + q)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/report?url="+q || resp.Header.Get("RateLimit-Remaining") != "2" {
		t.Fatalf("post: %d %q, %s remaining", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("RateLimit-Remaining"))
	}
	_, page := testenv.Get(t, svc.URL+resp.Header.Get("Location"))
	var rep report.Result
	_, raw := testenv.Get(t, svc.URL+"/api/report?url="+q)
	json.Unmarshal(raw, &rep)
	if m := scoreRe.FindSubmatch(page); m == nil || string(m[1]) != strconv.Itoa(rep.Score.Value) {
		t.Errorf("after the post the page shows %q, the report %d", m, rep.Score.Value)
	}
	// "Scan again" is a fresh scan through the same form.
	if !bytes.Contains(page, []byte(`action="`+html.EscapeString("/report?url="+url.QueryEscape(rep.URL))+`&amp;fresh=1"><button type="submit" id="rescan"`)) {
		t.Errorf("no scan-again form: %.3000s", page)
	}
	post(svc.URL + "/report?url=" + q + "&fresh=1")
	post(svc.URL + "/report?url=" + q + "&fresh=1")
	resp, b = post(svc.URL + "/report?url=" + q + "&fresh=1")
	if resp.StatusCode != 429 || !bytes.Contains(b, []byte("0 of 3 left")) || !bytes.Contains(b, []byte("The next one is free at ")) || bytes.Contains(b, []byte("/api/agent/token")) || scoreRe.Match(b) {
		t.Errorf("over the allowance: %d %.2000s", resp.StatusCode, b)
	}
	if resp, b := post(svc.URL + "/report?url=" + url.QueryEscape("http://10.0.0.1/")); resp.StatusCode < 400 || resp.StatusCode >= 500 || scoreRe.Match(b) {
		t.Errorf("a private address: %d", resp.StatusCode)
	}
}
