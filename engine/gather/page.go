package gather

import (
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/jsonld"
	"github.com/agentready/agentready/engine/parse/linkset"
	"github.com/agentready/agentready/engine/weburl"
)

// The homepage family: GET / as HTML (parsed once into the page, its Link
// header and its JSON-LD graph), the same page asked for as markdown, a
// conditional re-request, the plain-HTTP twin of an https target, and the
// same-origin scripts read for WebMCP. Its checks are in engine/checks/page.go.

// HomePage is the homepage as fetched with Accept: text/html.
type HomePage struct {
	Resp   *fetch.Response
	Page   *htmlpage.Page // nil when the homepage is not HTML
	Links  []linkset.HeaderLink
	JSONLD *jsonld.Graph
}

// LinkedFromHome returns the targets of rel in the homepage's Link header and in its <link> elements.
func (h *HomePage) LinkedFromHome(rel string) (header, html []string) {
	for _, l := range h.Links {
		if hasRel(l.Rels, rel) {
			header = append(header, l.Href)
		}
	}
	if h.Page != nil {
		for _, l := range h.Page.Links {
			if l.HasRel(rel) {
				html = append(html, l.Href)
			}
		}
	}
	return header, html
}

var homeGatherer = Define(Home, "GET / as HTML: the page, its Link header and its JSON-LD. A homepage that cannot be fetched ends the scan.", nil,
	func(c *Ctx) (*HomePage, error) {
		h := fetchDoc(c, "/", AcceptHTML)
		if h.Err != nil {
			return nil, &UnreachableError{URL: c.URL("/"), Reason: describe(h.Err), Err: h.Err}
		}
		home := &HomePage{Resp: h}
		base := c.Site.Target
		if u, err := url.Parse(h.FinalURL); err == nil {
			base = u
		}
		home.Links = linkset.ParseHeader(h.Header.Values("Link"), base)
		if h.LooksHTML() || (h.OK() && h.ContentType() == "") {
			home.Page = htmlpage.Parse(h.Body, base)
			home.JSONLD = jsonld.Parse(home.Page.JSONLD)
		}
		return home, nil
	})

var markdownGatherer = Define(HomeMarkdown, "GET / with Accept: text/markdown (markdown negotiation).", nil,
	func(c *Ctx) (*fetch.Response, error) { return fetchDoc(c, "/", AcceptMarkdown), nil })

// The conditional request is only worth making when the homepage has both a
// validator and Cache-Control: without Cache-Control 3.6 is partial whatever
// the answer.
var revalidateGatherer = Define(Revalidated, "GET / again with If-None-Match or If-Modified-Since, when the homepage has Cache-Control and a validator (3.6).", []AnyKey{Home},
	func(c *Ctx) (*fetch.Response, error) {
		h := Get(c, Home).Resp
		if h.Header.Get("Cache-Control") == "" {
			return nil, nil
		}
		hdr := map[string]string{}
		if et := h.Header.Get("ETag"); et != "" {
			hdr["If-None-Match"] = et
		} else if lm := h.Header.Get("Last-Modified"); lm != "" {
			hdr["If-Modified-Since"] = lm
		} else {
			return nil, nil
		}
		return c.Fetch(fetch.Request{URL: c.URL("/"), Accept: AcceptHTML, Header: hdr}), nil
	})

var httpTwinGatherer = Define(HTTPTwin, "GET http:// of an https target without following redirects (does plain HTTP redirect to HTTPS?).", nil,
	func(c *Ctx) (*fetch.Response, error) {
		if c.Site.Target.Scheme != "https" {
			return nil, nil
		}
		return c.Fetch(fetch.Request{URL: "http://" + c.Site.Target.Host + "/", Accept: AcceptHTML, NoRedirect: true}), nil
	})

// scriptsGatherer reads same-origin scripts only when the homepage shows no
// WebMCP registration of its own (inline or a tool form): 1.18 needs one.
var scriptsGatherer = Define(Scripts, "Up to MaxScripts same-origin scripts of the homepage, when the page itself registers no WebMCP tool (1.18).", []AnyKey{Home},
	func(c *Ctx) ([]*fetch.Response, error) {
		page := Get(c, Home).Page
		if page == nil || page.ToolForms > 0 {
			return nil, nil
		}
		var reqs []fetch.Request
		for _, s := range page.Scripts {
			if WebMCPRegister.MatchString(s.Inline) {
				return nil, nil
			}
			if s.Src != "" && weburl.SameOrigin(c.Site.Target, s.Src) && len(reqs) < MaxScripts && (s.Type == "" || strings.Contains(s.Type, "javascript") || s.Type == "module") {
				reqs = append(reqs, fetch.Request{URL: s.Src, Accept: "application/javascript,text/javascript,*/*;q=0.5", MaxBody: 512 << 10})
			}
		}
		return c.FetchAll(reqs), nil
	})
