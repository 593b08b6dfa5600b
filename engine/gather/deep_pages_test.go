package gather

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
)

func TestSitemapLocs(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	urlset := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
<url><loc> https://a.example/one </loc><image:image><image:loc>https://a.example/pic.png</image:loc></image:image></url>
<url><loc>https://a.example/two</loc></url></urlset>`
	cases := []struct {
		name  string
		body  []byte
		max   int
		index bool
		want  string
	}{
		{"urlset, image locs ignored, space trimmed", []byte(urlset), 10, false, "https://a.example/one|https://a.example/two"},
		{"capped at max", []byte(urlset), 1, false, "https://a.example/one"},
		{"sitemap index", []byte(`<sitemapindex><sitemap><loc>https://a.example/s1.xml</loc></sitemap><sitemap><loc>https://a.example/s2.xml</loc></sitemap></sitemapindex>`), 10, true, "https://a.example/s1.xml|https://a.example/s2.xml"},
		{"gzipped", gz(urlset), 10, false, "https://a.example/one|https://a.example/two"},
		{"cut mid-document keeps what came before", []byte(urlset[:strings.Index(urlset, "two")]), 10, false, "https://a.example/one"},
		{"plain text sitemap", []byte("https://a.example/x\n\nnot a url\nhttps://a.example/y z\nhttp://a.example/w\n"), 10, false, "https://a.example/x|http://a.example/w"},
		{"HTML soft 404", []byte(`<!doctype html><html><body><loc>https://a.example/no</loc></body></html>`), 10, false, ""},
		{"another XML document", []byte(`<rss><channel><item><loc>https://a.example/no</loc></item></channel></rss>`), 10, false, ""},
		{"broken gzip", []byte{0x1f, 0x8b, 0, 1, 2}, 10, false, ""},
		{"empty", nil, 10, false, ""},
		{"max zero", []byte(urlset), 0, false, ""},
	}
	for _, c := range cases {
		index, locs := SitemapLocs(c.body, c.max)
		if index != c.index || strings.Join(locs, "|") != c.want {
			t.Errorf("%s: index %v locs %q, want %v %q", c.name, index, locs, c.index, c.want)
		}
	}
}

// A huge sitemap costs a bounded read: the first maxPageCandidates URLs.
func TestSitemapLocsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "<url><loc>https://a.example/p%d</loc></url>", i)
	}
	b.WriteString("</urlset>")
	_, locs := SitemapLocs([]byte(b.String()), maxPageCandidates)
	if len(locs) != maxPageCandidates || locs[len(locs)-1] != fmt.Sprintf("https://a.example/p%d", maxPageCandidates-1) {
		t.Errorf("%d locs, last %q", len(locs), locs[len(locs)-1])
	}
	long := "<urlset><url><loc>https://a.example/" + strings.Repeat("a", 3*maxLocLength) + "</loc></url><url><loc>https://a.example/ok</loc></url></urlset>"
	if _, locs := SitemapLocs([]byte(long), 10); strings.Join(locs, "|") != "https://a.example/ok" {
		t.Errorf("an over-long loc was kept or stopped the read: %q", locs)
	}
}

func FuzzSitemapLocs(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>https://a.example/one</loc></url></urlset>`), 5)
	f.Add([]byte(`<sitemapindex><sitemap><loc>/s.xml</loc></sitemap></sitemapindex>`), 2)
	f.Add([]byte("https://a.example/x\nhttps://a.example/y"), 1)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, 3)
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		max %= 50
		_, locs := SitemapLocs(body, max)
		if len(locs) > max && max >= 0 {
			t.Fatalf("%d locs, max %d", len(locs), max)
		}
		for _, l := range locs {
			if l == "" || len(l) > maxLocLength {
				t.Fatalf("loc %q", l)
			}
		}
	})
}

func TestPagePicker(t *testing.T) {
	target, _ := url.Parse("https://a.example/")
	home := &fetch.Response{FinalURL: "https://a.example/index.html"}
	p := newPagePicker(target, home)
	p.add("https://a.example/", "https://a.example", "https://a.example:443/#top", "https://a.example/index.html",
		"https://a.example/about", "https://a.example/about#team", "HTTPS://A.EXAMPLE/about",
		"https://a.example/files/report.PDF", "https://a.example/logo.png",
		"http://a.example/insecure", "https://www.a.example/www", "https://b.example/other", "mailto:x@a.example", "javascript:void(0)", "",
		"https://a.example/search?q=x", " https://a.example/trimmed ")
	if got := strings.Join(p.urls, "|"); got != "https://a.example/about|https://a.example/search?q=x|https://a.example/trimmed" {
		t.Errorf("picked %q", got)
	}
	if p.offOrigin != 3 || p.assets != 2 {
		t.Errorf("offOrigin %d assets %d, want 3 and 2", p.offOrigin, p.assets)
	}
}

// A homepage that redirected within the site moves the origin pages are
// taken from: the apex's sitemap lists www URLs.
func TestPagePickerFollowsHomeRedirect(t *testing.T) {
	target, _ := url.Parse("http://a.example/")
	p := newPagePicker(target, &fetch.Response{FinalURL: "https://www.a.example/en/"})
	p.add("https://www.a.example/", "https://www.a.example/en/", "https://www.a.example/pricing", "http://a.example/legacy",
		"https://b.example/x", "http://www.a.example/insecure")
	if got := strings.Join(p.urls, "|"); got != "https://www.a.example/pricing|http://a.example/legacy" || p.offOrigin != 2 {
		t.Errorf("picked %q, %d off-origin", got, p.offOrigin)
	}
	elsewhere := newPagePicker(target, &fetch.Response{FinalURL: "https://b.example/"})
	elsewhere.add("https://b.example/x")
	if len(elsewhere.urls) != 0 {
		t.Error("a homepage that redirected to another site moved the origin")
	}
}

func TestPageSpread(t *testing.T) {
	var list []string
	for i := 0; i < 100; i++ {
		list = append(list, fmt.Sprint(i))
	}
	got := pageSpread(list, 4)
	if strings.Join(got, ",") != "0,25,50,75" {
		t.Errorf("spread %v", got)
	}
	if len(pageSpread(list[:3], 20)) != 3 {
		t.Error("a short list is not kept whole")
	}
}

func runPages(t *testing.T, siteURL string) (*PagesDoc, *fetch.Session) {
	t.Helper()
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy(), RequestTimeout: 2 * time.Second}).NewSession()
	t.Cleanup(sess.Close)
	target, _ := url.Parse(siteURL + "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := MustPlan(homeGatherer, robotsGatherer, sitemapGatherer, pagesGatherer).Run(ctx, sess, Site{Target: target, Origin: siteURL, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatal(err)
	}
	return Get(set, Pages), sess
}

// The fixture's sitemap index is followed one level; the sample is
// same-origin pages only, each fetched as HTML and then as markdown, in
// the rounds the bound promises.
func TestPagesGathererSitemapIndex(t *testing.T) {
	site, err := fixture.Start(filepath.Join("..", "..", "testdata", "deep", "pages-good"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	doc, sess := runPages(t, site.URL)
	if doc.Source != "sitemap index" || len(doc.Children) != 2 || len(doc.Pages) != 10 || doc.OffOrigin != 1 || doc.Assets != 1 {
		t.Fatalf("source %q children %v pages %d offOrigin %d assets %d", doc.Source, doc.Children, len(doc.Pages), doc.OffOrigin, doc.Assets)
	}
	for _, p := range doc.Pages {
		if !p.HTML || p.Markdown == nil || p.Markdown.ContentType() != "text/markdown" || p.JSONLD == nil {
			t.Errorf("%s: html %v markdown %+v", p.URL, p.HTML, p.Markdown)
		}
	}
	html, md, other := 0, 0, 0
	for _, r := range sess.Records() {
		u, _ := url.Parse(r.URL)
		switch {
		case u.Host != strings.TrimPrefix(site.URL, "http://"):
			t.Errorf("request off the site: %s", r.URL)
		case r.Accept == AcceptMarkdown && u.Path != "/":
			md++
			if r.Round != 5 {
				t.Errorf("markdown of %s in round %d, want 5 (robots, index, children, pages, markdown)", u.Path, r.Round)
			}
		case r.Accept == AcceptHTML && u.Path != "/":
			html++
			if r.Round != 4 {
				t.Errorf("page %s in round %d, want 4", u.Path, r.Round)
			}
		default:
			other++
		}
	}
	// home, robots, the index and its two children.
	if html != 10 || md != 10 || other != 5 {
		t.Errorf("%d HTML, %d markdown, %d other requests; want 10, 10, 5", html, md, other)
	}
}

// A sitemap of 5,000 pages costs 20 page requests spread over the list,
// and pages that do not answer get no markdown request.
func TestPagesGathererLargeSitemapBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><urlset>`)
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "<url><loc>{{ORIGIN}}/p/%d</loc></url>", i)
	}
	b.WriteString("</urlset>")
	site, err := fixture.Start("", fixture.WithConfig(fixture.Config{Routes: map[string]fixture.Route{
		"/":            {Body: "<!doctype html><title>Home</title><h1>Home</h1>", ContentType: "text/html"},
		"/sitemap.xml": {Body: b.String(), ContentType: "application/xml"},
		"/p/500":       {Body: "<!doctype html><title>P</title><h1>P</h1>", ContentType: "text/html"},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	doc, _ := runPages(t, site.URL)
	if doc.Source != "sitemap" || doc.Candidates != maxPageCandidates || len(doc.Pages) != MaxSamplePages {
		t.Fatalf("source %q candidates %d pages %d", doc.Source, doc.Candidates, len(doc.Pages))
	}
	if last := doc.Pages[MaxSamplePages-1].URL; !strings.HasSuffix(last, "/p/950") {
		t.Errorf("the sample ends at %s, not spread to /p/950", last)
	}
	pages, md := 0, 0
	for _, h := range site.Hits() {
		if strings.HasPrefix(h.Path, "/p/") {
			pages++
			if h.Accept == AcceptMarkdown {
				md++
			}
		}
	}
	if pages != MaxSamplePages+1 || md != 1 {
		t.Errorf("%d page requests (%d markdown), want %d (1: only /p/500 answered)", pages, md, MaxSamplePages+1)
	}
}
