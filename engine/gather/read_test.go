package gather

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
)

func TestTwinURL(t *testing.T) {
	cases := map[string]string{
		"https://a.example/docs/intro":         "https://a.example/docs/intro.md",
		"https://a.example/docs/intro/":        "https://a.example/docs/intro/index.md",
		"https://a.example/":                   "https://a.example/index.md",
		"https://a.example":                    "https://a.example/index.md",
		"https://a.example/docs/intro.html":    "https://a.example/docs/intro.md",
		"https://a.example/docs/intro.htm":     "https://a.example/docs/intro.md",
		"https://a.example/docs/intro?lang=en": "https://a.example/docs/intro.md",
		"https://a.example/docs/intro#usage":   "https://a.example/docs/intro.md",
		"https://a.example/docs/v1.2":          "https://a.example/docs/v1.2.md",
		"https://a.example/caf%C3%A9":          "https://a.example/caf%C3%A9.md",
		"https://a.example/café/":              "https://a.example/caf%C3%A9/index.md",
		"http://a.example:8080/x":              "http://a.example:8080/x.md",
	}
	for in, want := range cases {
		if got := TwinURL(in); got != want {
			t.Errorf("TwinURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A path with an escaped slash keeps it: the twin of /a%2Fb is /a%2Fb.md,
// not /a/b.md (another resource).
func TestTwinURLKeepsEscapedPath(t *testing.T) {
	if got, want := TwinURL("https://a.example/pkg/a%2Fb"), "https://a.example/pkg/a%2Fb.md"; got != want {
		t.Errorf("TwinURL = %q, want %q", got, want)
	}
}

func TestHTMLOfTwin(t *testing.T) {
	cases := map[string]string{
		"https://a.example/docs/intro.md":       "https://a.example/docs/intro",
		"https://a.example/docs/intro.MD":       "https://a.example/docs/intro",
		"https://a.example/docs/index.md":       "https://a.example/docs/",
		"https://a.example/index.md":            "https://a.example/",
		"https://a.example/docs/reindex.md":     "https://a.example/docs/reindex",
		"https://a.example/docs/intro":          "",
		"https://a.example/docs/intro.mdx":      "",
		"https://a.example/docs/":               "",
		"https://a.example/README.markdown":     "",
		"https://a.example/caf%C3%A9.md":        "https://a.example/caf%C3%A9",
		"https://a.example/docs/intro.html.md":  "https://a.example/docs/intro.html",
		"https://a.example/docs/intro.md?v=2":   "https://a.example/docs/intro?v=2",
		"https://a.example/docs/intro.md#usage": "https://a.example/docs/intro#usage",
		"::not a url":                           "",
	}
	for in, want := range cases {
		if got := htmlOfTwin(in); got != want {
			t.Errorf("htmlOfTwin(%q) = %q, want %q", in, got, want)
		}
	}
	// The two conventions invert each other on the paths llms.txt uses.
	for _, twin := range []string{"https://a.example/docs/intro.md", "https://a.example/docs/index.md", "https://a.example/index.md", "https://a.example/caf%C3%A9.md"} {
		if got := TwinURL(htmlOfTwin(twin)); got != twin {
			t.Errorf("TwinURL(htmlOfTwin(%q)) = %q", twin, got)
		}
	}
}

func TestMissingSibling(t *testing.T) {
	cases := map[string]string{
		"https://a.example/docs/intro":       "https://a.example/docs/intro-" + MissingPagePrefix,
		"https://a.example/docs/intro/":      "https://a.example/docs/intro-" + MissingPagePrefix,
		"https://a.example/docs/intro?x=1#y": "https://a.example/docs/intro-" + MissingPagePrefix,
		"https://a.example/café":             "https://a.example/caf%C3%A9-" + MissingPagePrefix,
	}
	for in, prefix := range cases {
		a, b := missingSibling(in), missingSibling(in)
		if !strings.HasPrefix(a, prefix) || len(a) != len(prefix)+12 || strings.ContainsAny(a[len(prefix):], "?#/") {
			t.Errorf("missingSibling(%q) = %q, want %s + 12 hex digits", in, a, prefix)
		}
		if a == b {
			t.Errorf("missingSibling(%q) is not random: %q twice", in, a)
		}
	}
}

func TestInterleave(t *testing.T) {
	cases := []struct {
		a, b, all, want []string
	}{
		{nil, nil, nil, nil},
		{[]string{"a1", "a2", "a3"}, []string{"b1"}, nil, []string{"a1", "b1", "a2", "a3"}},
		{[]string{"a1"}, []string{"b1", "b2", "b3"}, nil, []string{"a1", "b1", "b2", "b3"}},
		// A URL in both lists is kept once, where it first comes.
		{[]string{"x", "a2"}, []string{"x", "b2"}, []string{"b2", "c1", "x", "c2"}, []string{"x", "a2", "b2", "c1", "c2"}},
		{nil, nil, []string{"c1", "c1", "c2"}, []string{"c1", "c2"}},
	}
	for _, c := range cases {
		if got := interleave(c.a, c.b, c.all); !slices.Equal(got, c.want) {
			t.Errorf("interleave(%v, %v, %v) = %v, want %v", c.a, c.b, c.all, got, c.want)
		}
	}
}

func TestSpreadSections(t *testing.T) {
	var blog []string
	for i := 0; i < 30; i++ {
		blog = append(blog, fmt.Sprintf("https://a.example/blog/post-%d", i))
	}
	list := append(slices.Clone(blog), "https://a.example/docs/a", "https://a.example/docs/b", "https://a.example/pricing", "https://a.example/pricing?plan=team", "https://a.example/ü/x")
	got := spreadSections(list, 10)
	want := []string{"https://a.example/blog/post-0", "https://a.example/docs/a", "https://a.example/pricing", "https://a.example/ü/x",
		"https://a.example/blog/post-1", "https://a.example/docs/b", "https://a.example/pricing?plan=team",
		"https://a.example/blog/post-2", "https://a.example/blog/post-3", "https://a.example/blog/post-4"}
	if !slices.Equal(got, want) {
		t.Errorf("spreadSections = %v\nwant %v", got, want)
	}
	// Short lists are kept as they are; n bounds the rest.
	if got := spreadSections(list[:3], 10); !slices.Equal(got, list[:3]) {
		t.Errorf("a short list changed: %v", got)
	}
	for _, n := range []int{0, 1, 5, len(list) - 1} {
		got := spreadSections(list, n)
		if len(got) != n {
			t.Errorf("spreadSections(%d) picked %d", n, len(got))
		}
		seen := map[string]bool{}
		for _, u := range got {
			if seen[u] || !slices.Contains(list, u) {
				t.Errorf("spreadSections(%d) picked %q twice or from nowhere", n, u)
			}
			seen[u] = true
		}
	}
	// A page at the root is a section of its own (/pricing); /docs/ and
	// /docs/x are one section.
	root := []string{"https://a.example/docs/", "https://a.example/docs/x", "https://a.example/docs/y", "https://a.example/a", "https://a.example/b"}
	if got := spreadSections(root, 3); !slices.Equal(got, []string{"https://a.example/docs/", "https://a.example/a", "https://a.example/b"}) {
		t.Errorf("root pages: %v", got)
	}
}

// runRead gathers the read sample (and what it needs) from siteURL.
func runRead(t *testing.T, siteURL string, pages int) (*ReadDoc, *fetch.Session) {
	t.Helper()
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy(), RequestTimeout: 2 * time.Second}).NewSession()
	t.Cleanup(sess.Close)
	target, _ := url.Parse(siteURL + "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := MustPlan(homeGatherer, robotsGatherer, sitemapGatherer, llmsGatherer, readGatherer).Run(ctx, sess, Site{Target: target, Origin: siteURL, ScannerOrigin: sess.Origin(), ReadPages: pages})
	if err != nil {
		t.Fatal(err)
	}
	return Get(set, ReadSample), sess
}

const htmlPage = "<!doctype html><title>P</title><main><h1>P</h1><p>words</p></main>"

func page() fixture.Route { return fixture.Route{Body: htmlPage, ContentType: "text/html"} }

func startSite(t *testing.T, routes map[string]fixture.Route) *fixture.Site {
	t.Helper()
	if _, ok := routes["/"]; !ok {
		routes["/"] = page()
	}
	site, err := fixture.Start("", fixture.WithConfig(fixture.Config{Routes: routes}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	return site
}

// llms.txt's .md links name pages whose HTML is the URL without .md; the
// sample alternates llms.txt and the sitemap, and reads each page three ways.
func TestGatherReadSources(t *testing.T) {
	site := startSite(t, map[string]fixture.Route{
		"/llms.txt": {ContentType: "text/plain", Body: "# S\n\n## Docs\n\n- [A]({{ORIGIN}}/docs/a.md): a\n- [B](/docs/b.md): b\n- [Index](/docs/index.md): i\n- [Off](https://elsewhere.example/x.md): off\n"},
		"/sitemap.xml": {ContentType: "application/xml", Body: `<urlset><url><loc>{{ORIGIN}}/</loc></url><url><loc>{{ORIGIN}}/docs/a</loc></url>` +
			`<url><loc>{{ORIGIN}}/blog/one</loc></url><url><loc>{{ORIGIN}}/blog/two</loc></url><url><loc>{{ORIGIN}}/logo.png</loc></url></urlset>`},
		"/docs/a": page(), "/docs/a.md": {Body: "# A", ContentType: "text/markdown"},
		"/docs/b": page(), "/docs/": page(), "/blog/one": page(), "/blog/two": page(),
	})
	doc, _ := runRead(t, site.URL, 0)
	if doc.Limit != DefaultReadPages || doc.Source != "llms.txt and the sitemap" {
		t.Errorf("limit %d source %q", doc.Limit, doc.Source)
	}
	var urls []string
	for _, p := range doc.Pages {
		urls = append(urls, strings.TrimPrefix(p.URL, site.URL))
	}
	// Alternating: llms.txt's a, the sitemap's homepage (a page it lists
	// like any other), llms.txt's b, (the sitemap's a again), llms.txt's
	// /docs/, the sitemap's /blog/one, then /blog/two.
	want := []string{"/docs/a", "/", "/docs/b", "/docs/", "/blog/one", "/blog/two"}
	if !slices.Equal(urls, want) || doc.Candidates != 6 {
		t.Fatalf("sample %v (%d candidates), want %v", urls, doc.Candidates, want)
	}
	if len(doc.LlmsLinks) != 3 || len(doc.Sitemap) != 4 {
		t.Errorf("llms links %v sitemap %v: want the 3 on-site links and 4 sitemap pages (the homepage too, not the image)", doc.LlmsLinks, doc.Sitemap)
	}
	a := doc.Pages[0]
	if a.From != "llms.txt" || a.LlmsLink != site.URL+"/docs/a.md" || a.TwinURL != site.URL+"/docs/a.md" {
		t.Errorf("/docs/a: from %q llms link %q twin %q", a.From, a.LlmsLink, a.TwinURL)
	}
	if a.HTML.Status != 200 || a.Page == nil || a.Twin.Status != 200 || a.Negotiated == nil {
		t.Errorf("/docs/a read: html %d page %v twin %d negotiated %v", a.HTML.Status, a.Page != nil, a.Twin.Status, a.Negotiated)
	}
	if home := doc.Pages[1]; home.From != "sitemap" || home.TwinURL != site.URL+"/index.md" {
		t.Errorf("/: from %q twin %q", home.From, home.TwinURL)
	}
	if idx := doc.Pages[3]; idx.TwinURL != site.URL+"/docs/index.md" || idx.LlmsLink != site.URL+"/docs/index.md" {
		t.Errorf("/docs/: twin %q llms link %q", idx.TwinURL, idx.LlmsLink)
	}
	if b := doc.Pages[4]; b.From != "sitemap" || b.LlmsLink != "" {
		t.Errorf("/blog/one: from %q llms link %q", b.From, b.LlmsLink)
	}
	if doc.Missing == nil || !strings.HasPrefix(doc.Missing.RequestURL, site.URL+"/docs/a-"+MissingPagePrefix) || doc.Missing.Status != 404 {
		t.Errorf("missing probe %+v", doc.Missing)
	}
	for _, h := range site.Hits() {
		if strings.Contains(h.Path, "elsewhere") {
			t.Errorf("fetched an off-site link: %s", h.Path)
		}
	}
}

// An llms.txt link is judged as llms.txt lists it: the .md URL fetched is
// the one listed (spec: ".md links from llms.txt are fetched as they are"),
// and a fragment does not lose the link.
func TestGatherReadLlmsLinksAsListed(t *testing.T) {
	site := startSite(t, map[string]fixture.Route{
		"/llms.txt":   {ContentType: "text/plain", Body: "# S\n\n- [Guide](/guide.html.md)\n- [Usage](/docs/usage#install)\n- [Ref](/docs/ref.md#top)\n"},
		"/guide.html": page(), "/guide.html.md": {Body: "# Guide", ContentType: "text/markdown"},
		"/docs/usage": page(), "/docs/ref": page(), "/docs/ref.md": {Body: "# Ref", ContentType: "text/markdown"},
	})
	doc, _ := runRead(t, site.URL, 0)
	if len(doc.Pages) != 3 {
		t.Fatalf("%d pages sampled, want 3", len(doc.Pages))
	}
	for _, p := range doc.Pages {
		var listed *fetch.Response
		switch strings.SplitN(p.LlmsLink, "#", 2)[0] {
		case p.URL:
			listed = p.HTML
		case p.TwinURL:
			listed = p.Twin
		}
		if listed == nil || !listed.OK() {
			t.Errorf("%s: llms.txt lists %q, but the sample fetched %q (twin) and %q (page): the listed URL's answer is lost", p.URL, p.LlmsLink, p.TwinURL, p.URL)
		}
	}
}

// No llms.txt and no sitemap: the homepage's links, nofollow ones skipped.
func TestGatherReadHomepageLinks(t *testing.T) {
	site := startSite(t, map[string]fixture.Route{
		"/":      {ContentType: "text/html", Body: `<title>H</title><a href="/about">About</a><a rel="nofollow" href="/login">In</a><a href="https://elsewhere.example/x">X</a><a href="/about#team">Team</a>`},
		"/about": page(),
	})
	doc, _ := runRead(t, site.URL, 0)
	if doc.Source != "homepage links" || len(doc.Pages) != 1 || doc.Pages[0].URL != site.URL+"/about" || doc.Pages[0].From != "homepage links" {
		t.Fatalf("source %q pages %+v", doc.Source, doc.Pages)
	}
}

// ReadPages < 0 turns the suite off: no request beyond what it needs.
func TestGatherReadOff(t *testing.T) {
	site := startSite(t, map[string]fixture.Route{"/sitemap.xml": {ContentType: "application/xml", Body: `<urlset><url><loc>{{ORIGIN}}/a</loc></url></urlset>`}, "/a": page()})
	doc, sess := runRead(t, site.URL, -1)
	if doc.Limit != 0 || len(doc.Pages) != 0 || doc.Missing != nil {
		t.Errorf("off: %+v", doc)
	}
	for _, r := range sess.Records() {
		if r.ReadSuite {
			t.Errorf("the suite is off but asked for %s", r.URL)
		}
	}
}

// A sitemap index: the first same-site child is read, the others are not.
func TestGatherReadSitemapIndex(t *testing.T) {
	site := startSite(t, map[string]fixture.Route{
		"/sitemap.xml": {ContentType: "application/xml", Body: `<sitemapindex><sitemap><loc>https://elsewhere.example/s.xml</loc></sitemap><sitemap><loc>{{ORIGIN}}/s1.xml</loc></sitemap><sitemap><loc>{{ORIGIN}}/s2.xml</loc></sitemap></sitemapindex>`},
		"/s1.xml":      {ContentType: "application/xml", Body: `<urlset><url><loc>{{ORIGIN}}/a</loc></url></urlset>`},
		"/s2.xml":      {ContentType: "application/xml", Body: `<urlset><url><loc>{{ORIGIN}}/b</loc></url></urlset>`},
		"/a":           page(), "/b": page(),
	})
	doc, _ := runRead(t, site.URL, 0)
	if len(doc.Sitemap) != 1 || doc.Sitemap[0] != site.URL+"/a" || doc.Source != "the sitemap" {
		t.Errorf("sitemap %v source %q", doc.Sitemap, doc.Source)
	}
	for _, h := range site.Hits() {
		if h.Path == "/s2.xml" {
			t.Error("read a second child sitemap")
		}
	}
}
