package gather

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/jsonld"
	"github.com/agentready/agentready/engine/weburl"
)

// Bounds of pages.sample. The probe costs at most MaxChildSitemaps +
// 2×MaxSamplePages requests (3 + 40) in three dependent rounds: the child
// sitemaps of an index, the pages as HTML, then markdown for the pages
// that answered.
const (
	MaxSamplePages   = 20
	MaxChildSitemaps = 3
	// maxPageCandidates bounds the URLs read from sitemaps before sampling:
	// enough to spread the sample over a large site, not a 50,000-URL walk.
	maxPageCandidates = 1000
	// maxSitemapTokens bounds the XML tokens one sitemap costs to read.
	maxSitemapTokens = 400_000
	// maxSitemapBytes bounds a gzipped sitemap once inflated.
	maxSitemapBytes = 4 << 20
	maxLocLength    = weburl.MaxLength
)

// PageSample is one page beyond the homepage, fetched as HTML and again
// with Accept: text/markdown. Only what pages.sample judges is kept.
type PageSample struct {
	URL        string
	Resp       *fetch.Response
	HTML       bool            // the answer was HTML and was parsed
	RobotsMeta []htmlpage.Meta // <meta name="robots"> and <meta name="googlebot">
	H1         int
	JSONLD     *jsonld.Graph // nil unless HTML
	// SameAsHome: the body is the homepage's, byte for byte (a server that
	// answers every path with its homepage: a soft 404).
	SameAsHome bool
	Markdown   *fetch.Response // nil when the page did not answer 2xx
}

// PagesDoc is what pages.sample tried.
type PagesDoc struct {
	Source     string   // "sitemap", "sitemap index", "homepage links", or "" when no page was found
	SitemapURL string   // the sitemap read, when one was
	Children   []string // child sitemaps of an index that were read
	Candidates int      // distinct same-origin page URLs found (up to maxPageCandidates)
	OffOrigin  int      // URLs skipped because they are on another origin
	Assets     int      // URLs skipped because they name a non-HTML file
	Pages      []*PageSample
}

// Pages is the pages.sample artifact.
var Pages = NewKey[*PagesDoc]("deep-pages")

var pagesGatherer = deepGatherer(Define(Pages, "Up to 20 same-origin pages beyond the homepage, from the sitemap (one level of sitemap index, 3 children at most) or else the homepage's links, each fetched as HTML and, when it answers, with Accept: text/markdown.",
	[]AnyKey{Home, Sitemap}, gatherPages))

func gatherPages(c *Ctx) (*PagesDoc, error) {
	home, sm := Get(c, Home), Get(c, Sitemap)
	out := &PagesDoc{}
	pick := newPagePicker(c.Site.Target, home.Resp)
	read := []*fetch.Response{sm.Resp, home.Resp} // what the page URLs came from
	if sm.Resp.OK() && !sm.Resp.LooksHTML() {
		// A sitemap cut by the body cap still lists pages at its start: only
		// the first maxPageCandidates are wanted.
		index, locs := SitemapLocs(sm.Resp.Body, maxPageCandidates)
		out.SitemapURL = sm.URL
		if index {
			var reqs []fetch.Request
			for _, l := range locs {
				if len(reqs) == MaxChildSitemaps {
					break
				}
				if weburl.SameSite(c.Site.Target, l) {
					reqs = append(reqs, fetch.Request{URL: l, Accept: acceptXML, Round: After(sm.Resp)})
					out.Children = append(out.Children, l)
				}
			}
			children := c.FetchAll(reqs)
			read = append(read, children...)
			for _, r := range children {
				if r.OK() {
					if childIndex, child := SitemapLocs(r.Body, maxPageCandidates); !childIndex {
						pick.add(child...)
					}
				}
			}
			if len(pick.urls) > 0 {
				out.Source = "sitemap index"
			}
		} else {
			pick.add(locs...)
			if len(pick.urls) > 0 {
				out.Source = "sitemap"
			}
		}
	}
	if len(pick.urls) == 0 && home.Page != nil {
		pick.addLinks(home.Page)
		if len(pick.urls) > 0 {
			out.Source = "homepage links"
		}
	}
	out.Candidates, out.OffOrigin, out.Assets = len(pick.urls), pick.offOrigin, pick.assets
	sample := pageSpread(pick.urls, MaxSamplePages)
	if len(sample) == 0 {
		return out, nil
	}
	reqs := make([]fetch.Request, len(sample))
	for i, u := range sample {
		reqs[i] = fetch.Request{URL: u, Accept: AcceptHTML, Round: After(read...)}
	}
	htmls := c.FetchAll(reqs)
	var mdReqs []fetch.Request
	var mdOf []int
	for i, r := range htmls {
		p := &PageSample{URL: sample[i], Resp: r}
		out.Pages = append(out.Pages, p)
		if !r.OK() {
			continue
		}
		mdReqs = append(mdReqs, fetch.Request{URL: sample[i], Accept: AcceptMarkdown, Round: After(htmls...)})
		mdOf = append(mdOf, i)
		p.SameAsHome = home.Resp.OK() && len(r.Body) > 0 && bytes.Equal(r.Body, home.Resp.Body)
		if !r.LooksHTML() {
			continue
		}
		base, err := url.Parse(r.FinalURL)
		if err != nil {
			base = c.Site.Target
		}
		page := htmlpage.Parse(r.Body, base)
		p.HTML = true
		for _, m := range page.Metas {
			if m.Name == "robots" || m.Name == "googlebot" {
				p.RobotsMeta = append(p.RobotsMeta, m)
			}
		}
		for _, h := range page.Headings {
			if h.Level == 1 {
				p.H1++
			}
		}
		p.JSONLD = jsonld.Parse(page.JSONLD)
	}
	for j, r := range c.FetchAll(mdReqs) {
		out.Pages[mdOf[j]].Markdown = r
	}
	return out, nil
}

func pageRelHas(list []string, t string) bool {
	for _, x := range list {
		if strings.EqualFold(x, t) {
			return true
		}
	}
	return false
}

// pagePicker keeps the distinct same-origin HTML page URLs, homepage
// excluded. The site's origin is the scanned one and, when the homepage
// redirected within the site (example.com to www.example.com, http to
// https), the one it landed on: that is where its sitemap's URLs live.
type pagePicker struct {
	origins   []*url.URL
	home      map[string]bool
	seen      map[string]bool
	urls      []string
	offOrigin int
	assets    int
}

func newPagePicker(target *url.URL, home *fetch.Response) *pagePicker {
	p := &pagePicker{origins: []*url.URL{target}, home: map[string]bool{}, seen: map[string]bool{}}
	p.home[pageKey(target)] = true
	if home != nil {
		if u, err := url.Parse(home.FinalURL); err == nil && home.FinalURL != "" && weburl.SameSite(target, home.FinalURL) {
			p.home[pageKey(u)] = true
			root := *u
			root.Path, root.RawPath, root.RawQuery = "/", "", ""
			p.home[pageKey(&root)] = true
			p.origins = append(p.origins, u)
		}
	}
	return p
}

func (p *pagePicker) add(refs ...string) {
	for _, ref := range refs {
		if len(p.urls) >= maxPageCandidates {
			return
		}
		u, err := url.Parse(strings.TrimSpace(ref))
		if err != nil || ref == "" || len(ref) > maxLocLength || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		if !p.onSite(u) {
			p.offOrigin++
			continue
		}
		if u.Path == "" {
			u.Path = "/"
		}
		k := pageKey(u)
		if p.home[k] || p.seen[k] {
			continue
		}
		p.seen[k] = true
		if IsAsset(u.Path) {
			p.assets++
			continue
		}
		p.urls = append(p.urls, u.String())
	}
}

// addLinks adds the page's links but those marked nofollow: the fallback
// when neither llms.txt nor the sitemap names a page.
func (p *pagePicker) addLinks(page *htmlpage.Page) {
	for _, a := range page.Anchors {
		if !pageRelHas(a.Rels, "nofollow") {
			p.add(a.Href)
		}
	}
}

// pageKey identifies a page: scheme, host without its default port, path and query.
func pageKey(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return strings.ToLower(u.Scheme) + "://" + pageHostKey(u) + p + "?" + u.RawQuery
}

func pageHostKey(u *url.URL) string {
	h, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return h
	}
	return h + ":" + port
}

func (p *pagePicker) onSite(u *url.URL) bool {
	for _, o := range p.origins {
		if pageSameOrigin(o, u) {
			return true
		}
	}
	return false
}

func pageSameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && pageHostKey(a) == pageHostKey(b)
}

// assetExt are file extensions that name something other than an HTML page.
var assetExt = map[string]bool{
	".pdf": true, ".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true, ".avif": true, ".svg": true, ".ico": true,
	".css": true, ".js": true, ".mjs": true, ".json": true, ".yaml": true, ".yml": true, ".xml": true, ".txt": true, ".md": true, ".csv": true, ".rss": true, ".atom": true,
	".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true, ".dmg": true, ".exe": true, ".apk": true,
	".mp3": true, ".mp4": true, ".m4a": true, ".mov": true, ".webm": true, ".ogg": true, ".wav": true,
	".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true, ".epub": true,
}

// IsAsset reports a URL path naming a non-HTML file by its extension.
func IsAsset(p string) bool {
	return assetExt[strings.ToLower(path.Ext(p))]
}

// pageSpread picks up to n items evenly over list, keeping their order, so a
// sample of a large sitemap covers more than its first section.
func pageSpread(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, list[i*len(list)/n])
	}
	return out
}

// SitemapLocs reads the <loc> URLs of a sitemap (up to max): a urlset's
// pages, or, with index true, a sitemap index's child sitemaps. It also
// reads gzipped sitemaps (inflated up to 4 MiB) and plain-text sitemaps
// (one URL a line). A document that breaks off yields the URLs before the
// break: a sitemap cut by the body cap still names pages.
func SitemapLocs(body []byte, max int) (index bool, locs []string) {
	if max <= 0 {
		return false, nil
	}
	if len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return false, nil
		}
		inflated, _ := io.ReadAll(io.LimitReader(zr, maxSitemapBytes))
		body = inflated
	}
	t := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if !bytes.HasPrefix(t, []byte("<")) {
		return false, textLocs(t, max)
	}
	dec := xml.NewDecoder(bytes.NewReader(t))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	depth, inLoc := 0, false
	var loc strings.Builder
	for tokens := 0; tokens < maxSitemapTokens; tokens++ {
		tok, err := dec.Token()
		if err != nil {
			return index, locs
		}
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			name := strings.ToLower(e.Name.Local)
			switch {
			case depth == 1 && name == "sitemapindex":
				index = true
			case depth == 1 && name != "urlset":
				return false, nil
			case depth == 3 && name == "loc":
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc && loc.Len() <= maxLocLength {
				loc.Write(e)
			}
		case xml.EndElement:
			if inLoc && depth == 3 {
				inLoc = false
				if s := strings.TrimSpace(loc.String()); s != "" && len(s) <= maxLocLength {
					locs = append(locs, s)
					if len(locs) >= max {
						return index, locs
					}
				}
			}
			depth--
		}
	}
	return index, locs
}

// textLocs reads a plain-text sitemap: one absolute http(s) URL a line.
func textLocs(body []byte, max int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), maxLocLength+2)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			if !strings.ContainsAny(l, " \t<>\"") {
				out = append(out, l)
				if len(out) >= max {
					break
				}
			}
		}
	}
	return out
}
