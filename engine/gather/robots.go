package gather

import (
	"net/url"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/robots"
	"github.com/agentready/agentready/engine/parse/xmldoc"
	"github.com/agentready/agentready/engine/weburl"
)

// The robots family: /robots.txt parsed per RFC 9309, and the sitemap it
// declares (else /sitemap.xml). Its checks are in engine/checks/robots.go.

// RobotsTxt is /robots.txt and its parse.
type RobotsTxt struct {
	Resp *fetch.Response
	File *robots.File // nil unless robots.txt was found
}

// SitemapDoc is the sitemap robots.txt declares, else /sitemap.xml.
type SitemapDoc struct {
	Resp     *fetch.Response
	Declared bool
	URL      string
	Info     xmldoc.Info // zero unless the answer was 2xx
}

var robotsGatherer = Define(Robots, "/robots.txt, parsed per RFC 9309.", nil,
	func(c *Ctx) (*RobotsTxt, error) {
		r := fetchDoc(c, "/robots.txt", acceptText)
		out := &RobotsTxt{Resp: r}
		if r.Found() {
			out.File = robots.Parse(r.Body)
		}
		return out, nil
	})

var sitemapGatherer = Define(Sitemap, "The first same-site Sitemap robots.txt declares (relative URLs resolved against robots.txt), else /sitemap.xml.", []AnyKey{Robots},
	func(c *Ctx) (*SitemapDoc, error) {
		rb := Get(c, Robots)
		s := &SitemapDoc{}
		robotsURL, _ := url.Parse(c.URL("/robots.txt"))
		if rb.File != nil {
			for _, sm := range rb.File.Sitemaps {
				ref, err := url.Parse(sm)
				if err != nil {
					continue
				}
				if abs := robotsURL.ResolveReference(ref).String(); weburl.SameSite(c.Site.Target, abs) {
					s.Declared, s.URL = true, abs
					break
				}
			}
		}
		if !s.Declared {
			s.URL = c.URL("/sitemap.xml")
		}
		s.Resp = c.Fetch(fetch.Request{URL: s.URL, Accept: acceptXML})
		if s.Resp.OK() && s.Resp.Complete() { // a cut sitemap is not judged from its beginning
			s.Info = xmldoc.Detect(s.Resp.Body)
		}
		return s, nil
	})
