package gather

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/agentcard"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/htmlpage"
	"github.com/agentready/agentready/engine/jsonld"
	"github.com/agentready/agentready/engine/linkset"
	"github.com/agentready/agentready/engine/llmstxt"
	"github.com/agentready/agentready/engine/mcpcard"
	"github.com/agentready/agentready/engine/openapi"
	"github.com/agentready/agentready/engine/robots"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/engine/wellknown"
	"github.com/agentready/agentready/engine/xmldoc"
)

// Site is what every gatherer and check knows before any request.
type Site struct {
	Target *url.URL // the site root
	Origin string   // scheme://host[:port]
	// ScannerOrigin is the Origin header every request carried (CORS is judged against it).
	ScannerOrigin string
}

// The artifacts of a web scan, one key each. Every document is parsed once,
// here, by the gatherer that fetched it; checks only judge.

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

// LlmsTxt is the llms.txt judged (found, or the last tried) and its validation.
type LlmsTxt struct {
	Resp   *fetch.Response
	Report *llmstxt.Report
}

// AgentCardDoc is the A2A agent card.
type AgentCardDoc struct {
	Resp   *fetch.Response
	Legacy bool // found only at /.well-known/agent.json
	Report *agentcard.Report
	Err    error
}

// APICatalog is the RFC 9727 api-catalog.
type APICatalog struct {
	Resp    *fetch.Response
	Linkset *linkset.Linkset
	Err     error
}

// OpenAPIDoc is the OpenAPI description found by links or common paths.
type OpenAPIDoc struct {
	Spec   *openapi.Spec
	Resp   *fetch.Response // the document graded (nil when none was found)
	Err    error           // why a found document did not load
	Source string          // how it was found: link header, catalog, common path…
}

// SkillFileDoc is /skill.md (or /SKILL.md) and its front matter.
type SkillFileDoc struct {
	Resp           *fetch.Response
	FrontMatter    map[string]any
	HasFrontMatter bool
}

// AISiteDoc is /.well-known/ai.json.
type AISiteDoc struct {
	Resp     *fetch.Response
	IsObject bool
	Valid    bool // names the site and its capabilities or skills
	Keys     []string
}

// SkillsIndexDoc is the Agent Skills index (v0.2, else v0.1).
type SkillsIndexDoc struct {
	Resp  *fetch.Response
	V01   bool
	Index *wellknown.SkillsIndex
	Err   error
}

// MCPCardDoc is the MCP server card and what the live handshake showed.
type MCPCardDoc struct {
	Resp  *fetch.Response
	Card  *mcpcard.Card
	Err   error
	Probe MCPProbe
}

// FeedDoc is the feed linked from the homepage, else found at a common path.
type FeedDoc struct {
	Resp   *fetch.Response // nil when the linked feed is on another site
	Linked bool
	Info   xmldoc.Info
}

// DocsPage is the documentation page, or the first probe answer when none was found.
type DocsPage struct {
	Resp   *fetch.Response
	Found  bool
	Source string
}

// AuthMetadata is an authorization-server metadata document (OpenID or RFC 8414).
type AuthMetadata struct {
	Resp   *fetch.Response
	Parsed *wellknown.AuthServer // nil unless found and JSON
	Err    error
}

// ProtectedResourceDoc is RFC 9728 metadata.
type ProtectedResourceDoc struct {
	Resp   *fetch.Response
	Parsed *wellknown.ProtectedResource
	Err    error
}

// X402Doc is /.well-known/x402.
type X402Doc struct {
	Resp     *fetch.Response
	Required *wellknown.PaymentRequired // nil unless found
}

// PaymentAnswer is a 402 seen anywhere in the scan with the x402
// requirements read from its PAYMENT-REQUIRED header or body.
type PaymentAnswer struct {
	Resp     *fetch.Response
	Required *wellknown.PaymentRequired
}

// ErrorProbeDoc is the answer to a path that cannot exist under the API base.
type ErrorProbeDoc struct {
	Resp *fetch.Response
	// JSON is a JSON Content-Type whose body decodes into an object (or
	// null); Object is that object.
	JSON   bool
	Object map[string]any
}

// Keys of the web scan's artifacts.
var (
	Home              = NewKey[*HomePage]("home")
	HomeMarkdown      = NewKey[*fetch.Response]("home-markdown")
	Revalidated       = NewKey[*fetch.Response]("home-revalidated")
	HTTPTwin          = NewKey[*fetch.Response]("http-twin")
	Robots            = NewKey[*RobotsTxt]("robots")
	Sitemap           = NewKey[*SitemapDoc]("sitemap")
	Llms              = NewKey[*LlmsTxt]("llms")
	AgentCard         = NewKey[*AgentCardDoc]("agent-card")
	Catalog           = NewKey[*APICatalog]("api-catalog")
	CatalogHead       = NewKey[*fetch.Response]("api-catalog-head") // nil unless GET found a catalog
	Spec              = NewKey[*OpenAPIDoc]("openapi")
	SkillFile         = NewKey[*SkillFileDoc]("skill-file")
	AISite            = NewKey[*AISiteDoc]("ai-site")
	SkillsIndex       = NewKey[*SkillsIndexDoc]("skills-index")
	MCPCard           = NewKey[*MCPCardDoc]("mcp-card")
	Feed              = NewKey[*FeedDoc]("feed")
	Docs              = NewKey[*DocsPage]("docs")
	ErrorProbe        = NewKey[*ErrorProbeDoc]("error-probe")
	Scripts           = NewKey[[]*fetch.Response]("scripts")
	OpenIDConfig      = NewKey[*AuthMetadata]("openid-configuration")
	OAuthServer       = NewKey[*AuthMetadata]("oauth-authorization-server")
	ProtectedResource = NewKey[*ProtectedResourceDoc]("oauth-protected-resource")
	X402              = NewKey[*X402Doc]("x402")
	// Responses is every response of the scan in request order, for checks
	// that judge headers across documents; it requires every artifact that
	// makes requests.
	Responses = NewKey[[]*fetch.Response]("responses")
	// Payments is every 402 of the scan, parsed (it requires Responses).
	Payments = NewKey[[]PaymentAnswer]("payments")

	// The first candidate of a search that later needs the homepage is asked
	// for at once, in the first round, by a gatherer of its own.
	specDefault = NewKey[*fetch.Response]("openapi-first-path")
	mcpDefault  = NewKey[*fetch.Response]("mcp-card-first-path")
)

func fetchDoc(c *Ctx, path, accept string) *fetch.Response {
	return c.Fetch(fetch.Request{URL: c.URL(path), Accept: accept})
}

// orFallback asks for fallback when first was not found, and keeps whichever was.
func orFallback(c *Ctx, first *fetch.Response, fallback, accept string) (*fetch.Response, bool) {
	if first.Found() {
		return first, false
	}
	if r := c.Fetch(fetch.Request{URL: c.URL(fallback), Accept: accept, Round: After(first)}); r.Found() {
		return r, true
	}
	return first, false
}

func baseOf(r *fetch.Response) *url.URL {
	u, _ := url.Parse(r.FinalURL)
	return u
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

var llmsGatherer = Define(Llms, "/llms.txt, then /.well-known/llms.txt, validated against llmstxt.org.", nil,
	func(c *Ctx) (*LlmsTxt, error) {
		r, _ := orFallback(c, fetchDoc(c, "/llms.txt", acceptText), "/.well-known/llms.txt", acceptText)
		out := &LlmsTxt{Resp: r}
		if r.Found() {
			out.Report = llmstxt.Validate(r.Body, baseOf(r))
		}
		return out, nil
	})

var agentCardGatherer = Define(AgentCard, "/.well-known/agent-card.json (A2A), then the legacy /.well-known/agent.json.", nil,
	func(c *Ctx) (*AgentCardDoc, error) {
		r, legacy := orFallback(c, fetchDoc(c, "/.well-known/agent-card.json", acceptJSON), "/.well-known/agent.json", acceptJSON)
		out := &AgentCardDoc{Resp: r, Legacy: legacy}
		if r.Found() {
			out.Report, out.Err = agentcard.Validate(r.Body)
		}
		return out, nil
	})

var catalogGatherer = Define(Catalog, "/.well-known/api-catalog (RFC 9727).", nil,
	func(c *Ctx) (*APICatalog, error) {
		r := fetchDoc(c, "/.well-known/api-catalog", acceptLinkset)
		out := &APICatalog{Resp: r}
		if r.Found() {
			out.Linkset, out.Err = linkset.Parse(r.Body, baseOf(r))
		}
		return out, nil
	})

// RFC 9727 also asks HEAD to carry the api-catalog relation; only worth asking when GET worked.
var catalogHeadGatherer = Define(CatalogHead, "HEAD /.well-known/api-catalog, when GET found a catalog.", []AnyKey{Catalog},
	func(c *Ctx) (*fetch.Response, error) {
		if !Get(c, Catalog).Resp.Found() {
			return nil, nil
		}
		return c.Fetch(fetch.Request{Method: http.MethodHead, URL: c.URL("/.well-known/api-catalog"), Accept: acceptLinkset}), nil
	})

var specDefaultGatherer = Define(specDefault, "GET "+SpecPaths[0]+", the first common path of the OpenAPI search.", nil,
	func(c *Ctx) (*fetch.Response, error) { return fetchDoc(c, SpecPaths[0], acceptSpec), nil })

var mcpDefaultGatherer = Define(mcpDefault, "GET "+MCPPaths[0]+", the first path of the MCP server card search.", nil,
	func(c *Ctx) (*fetch.Response, error) { return fetchDoc(c, MCPPaths[0], acceptJSON), nil })

var specGatherer = Define(Spec, "The OpenAPI description: links first (Link header, <link rel=service-desc>, api-catalog service-desc), then common paths.", []AnyKey{Home, Catalog, specDefault},
	func(c *Ctx) (*OpenAPIDoc, error) {
		home, cat := Get(c, Home), Get(c, Catalog)
		out := &OpenAPIDoc{}
		type cand struct{ url, source string }
		var links []cand
		seen := map[string]bool{}
		addLink := func(u, source string) {
			if u != "" && !seen[u] && weburl.SameSite(c.Site.Target, u) {
				seen[u] = true
				links = append(links, cand{u, source})
			}
		}
		header, html := home.LinkedFromHome("service-desc")
		for _, h := range header {
			addLink(h, "Link header")
		}
		for _, h := range html {
			addLink(h, "<link rel=\"service-desc\">")
		}
		if cat.Linkset != nil {
			for _, t := range cat.Linkset.Targets("service-desc") {
				addLink(t.Href, "api-catalog service-desc")
			}
		}
		var broken *OpenAPIDoc
		settle := func(r *fetch.Response, source string) bool {
			if !r.Found() {
				// A description too large (or too slow) to read whole is
				// reported as such, not as absent.
				if broken == nil && r.OK() && !r.Complete() && !r.LooksHTML() && mentionsOpenAPI(r.Body) {
					broken = &OpenAPIDoc{Resp: r, Err: errors.New("its body was cut: " + r.Cut), Source: source}
				}
				return false
			}
			spec, err := openapi.Load(r.Body, baseOf(r))
			if spec != nil {
				out.Spec, out.Resp, out.Source = spec, r, source
				return true
			}
			if broken == nil && !errors.Is(err, openapi.ErrNotOpenAPI) && mentionsOpenAPI(r.Body) {
				broken = &OpenAPIDoc{Resp: r, Err: err, Source: source}
			}
			return false
		}
		reqs := make([]fetch.Request, len(links))
		for i, l := range links {
			reqs[i] = fetch.Request{URL: l.url, Accept: acceptSpec}
		}
		linked := c.FetchAll(reqs)
		for i, l := range links {
			if settle(linked[i], l.source) {
				return out, nil
			}
		}
		def := Get(c, specDefault)
		if settle(def, "common path "+SpecPaths[0]) {
			return out, nil
		}
		rest := make([]fetch.Request, 0, len(SpecPaths)-1)
		for _, p := range SpecPaths[1:] {
			rest = append(rest, fetch.Request{URL: c.URL(p), Accept: acceptSpec, Round: After(append(linked, def)...)})
		}
		for i, r := range c.FetchAll(rest) {
			if settle(r, "common path "+SpecPaths[i+1]) {
				return out, nil
			}
		}
		if broken != nil {
			return broken, nil
		}
		return out, nil
	})

var skillFileGatherer = Define(SkillFile, "/skill.md, then /SKILL.md, with its YAML front matter.", nil,
	func(c *Ctx) (*SkillFileDoc, error) {
		r, _ := orFallback(c, fetchDoc(c, "/skill.md", acceptText), "/SKILL.md", acceptText)
		out := &SkillFileDoc{Resp: r}
		if r.Found() {
			out.FrontMatter, out.HasFrontMatter = wellknown.FrontMatter(r.Body)
		}
		return out, nil
	})

var aiSiteGatherer = Define(AISite, "/.well-known/ai.json.", nil,
	func(c *Ctx) (*AISiteDoc, error) {
		r := fetchDoc(c, "/.well-known/ai.json", acceptJSON)
		out := &AISiteDoc{Resp: r}
		if r.Found() {
			out.IsObject, out.Valid, out.Keys = wellknown.AISite(r.Body)
		}
		return out, nil
	})

var skillsIndexGatherer = Define(SkillsIndex, "/.well-known/agent-skills/index.json (v0.2), then /.well-known/skills/index.json (v0.1).", nil,
	func(c *Ctx) (*SkillsIndexDoc, error) {
		r, v01 := orFallback(c, fetchDoc(c, "/.well-known/agent-skills/index.json", acceptJSON), "/.well-known/skills/index.json", acceptJSON)
		out := &SkillsIndexDoc{Resp: r, V01: v01}
		if r.Found() {
			out.Index, out.Err = wellknown.ParseSkillsIndex(r.Body, v01)
		}
		return out, nil
	})

func authMetadata(k Key[*AuthMetadata], path string) *Gatherer {
	return Define(k, path+" (authorization-server metadata).", nil, func(c *Ctx) (*AuthMetadata, error) {
		r := fetchDoc(c, path, acceptJSON)
		out := &AuthMetadata{Resp: r}
		if r.Found() {
			out.Parsed, out.Err = wellknown.ParseAuthServer(r.Body, c.Site.Origin)
		}
		return out, nil
	})
}

var protectedResourceGatherer = Define(ProtectedResource, "/.well-known/oauth-protected-resource (RFC 9728).", nil,
	func(c *Ctx) (*ProtectedResourceDoc, error) {
		r := fetchDoc(c, "/.well-known/oauth-protected-resource", acceptJSON)
		out := &ProtectedResourceDoc{Resp: r}
		if r.Found() {
			out.Parsed, out.Err = wellknown.ParseProtectedResource(r.Body, c.Site.Target)
		}
		return out, nil
	})

var x402Gatherer = Define(X402, "/.well-known/x402 (x402 payment requirements).", nil,
	func(c *Ctx) (*X402Doc, error) {
		r := fetchDoc(c, "/.well-known/x402", acceptJSON)
		out := &X402Doc{Resp: r}
		if r.Found() {
			out.Required = wellknown.ParseX402("", r.Body)
		}
		return out, nil
	})

var mcpGatherer = Define(MCPCard, "The MCP server card (/.well-known/mcp/server-card, a <link rel=mcp>, then the other well-known paths) and a live handshake with its same-site endpoint.", []AnyKey{Home, mcpDefault},
	func(c *Ctx) (*MCPCardDoc, error) {
		home := Get(c, Home)
		r := Get(c, mcpDefault)
		if !r.Found() {
			var reqs []fetch.Request
			if home.Page != nil {
				for _, l := range home.Page.Links {
					if l.HasRel("mcp") && weburl.SameSite(c.Site.Target, l.Href) && !strings.HasSuffix(l.Href, MCPPaths[0]) {
						reqs = append(reqs, fetch.Request{URL: l.Href, Accept: acceptJSON, Round: After(r, home.Resp)})
						break
					}
				}
			}
			for _, p := range MCPPaths[1:] {
				reqs = append(reqs, fetch.Request{URL: c.URL(p), Accept: acceptJSON, Round: After(r, home.Resp)})
			}
			if f, _ := c.FirstFound(reqs, found); f != nil {
				r = f
			}
		}
		out := &MCPCardDoc{Resp: r}
		if !r.Found() {
			return out, nil
		}
		out.Card, out.Err = mcpcard.Parse(r.Body, baseOf(r))
		if out.Card == nil {
			return out, nil
		}
		for _, e := range out.Card.Endpoints {
			if weburl.SameSite(c.Site.Target, e) {
				out.Probe = probeMCP(c, e, r, out.Card)
				break
			}
		}
		return out, nil
	})

// probeMCP shakes hands with a card's endpoint in both protocol eras and
// lists its tools when the card does not. A stateful server opens a session
// with the initialize (even when server/discover answered too): it is ended
// with DELETE whatever happens next, as the transport spec asks of a client
// that no longer needs one.
func probeMCP(c *Ctx, endpoint string, card *fetch.Response, parsed *mcpcard.Card) MCPProbe {
	pr := MCPProbe{Endpoint: endpoint}
	post := func(body []byte, h map[string]string, round int) fetch.Request {
		// No Origin header: MCP servers rightly refuse cross-origin browser calls (DNS-rebinding protection).
		return fetch.Request{Method: http.MethodPost, URL: endpoint, Accept: mcpcard.Accept, Body: body, Header: h, Round: round, MaxBody: 1 << 20, NoOrigin: true}
	}
	db, dh := mcpcard.DiscoverRequest()
	ib, ih := mcpcard.InitializeRequest()
	hs := c.FetchAll([]fetch.Request{post(db, dh, After(card)), post(ib, ih, After(card))})
	modern, legacy := hs[0], hs[1]
	session, last := "", legacy
	if legacy.Err == nil {
		session = mcpcard.SessionID(legacy.Header)
	}
	defer func() {
		if session != "" {
			// Not redirected: a DELETE goes to the endpoint or nowhere.
			c.Fetch(fetch.Request{Method: http.MethodDelete, URL: endpoint, Header: mcpcard.EndSessionHeaders(session),
				NoRedirect: true, NoOrigin: true, MaxBody: 16 << 10, Round: After(last)})
		}
	}()
	// result is the JSON-RPC result answering request id, nil without one.
	result := func(r *fetch.Response, id int) *mcpcard.Reply {
		if !r.OK() {
			return nil
		}
		if rep, err := mcpcard.ReadReply(r.ContentType(), r.Body); err == nil && rep.Error == nil && rep.Answers(id) {
			return rep
		}
		return nil
	}
	pr.Modern, pr.Legacy = result(modern, 1) != nil, result(legacy, 1) != nil
	if !pr.Modern && !pr.Legacy {
		if legacy.Err != nil {
			pr.Error = describe(legacy.Err)
		} else {
			pr.Error = "server/discover answered " + strconv.Itoa(modern.Status) + " and initialize answered " + strconv.Itoa(legacy.Status) + " without a JSON-RPC result"
		}
		return pr
	}
	if len(parsed.Tools) > 0 {
		pr.Tools, pr.ToolsSource = parsed.Tools, "card"
		return pr
	}
	var list *fetch.Response
	if pr.Modern {
		b, h := mcpcard.ModernToolsListRequest()
		list = c.Fetch(post(b, h, After(modern)))
	} else {
		h := map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": mcpcard.LegacyVersion}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		notice := c.Fetch(post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h, After(legacy)))
		b, lh := mcpcard.LegacyToolsListRequest(session)
		list = c.Fetch(post(b, lh, After(notice)))
	}
	last = list
	if rep := result(list, 2); rep != nil {
		if tools, err := mcpcard.Tools(rep.Result); err == nil {
			pr.Tools, pr.ToolsSource = tools, "tools/list"
		}
	}
	return pr
}

var feedGatherer = Define(Feed, "The feed the homepage links (<link rel=alternate> RSS, Atom or JSON Feed), else the first feed at a common path.", []AnyKey{Home},
	func(c *Ctx) (*FeedDoc, error) {
		home := Get(c, Home)
		out := &FeedDoc{}
		if home.Page != nil {
			for _, l := range home.Page.Links {
				if !l.HasRel("alternate") || l.Href == "" {
					continue
				}
				if strings.Contains(l.Type, "rss") || strings.Contains(l.Type, "atom") || strings.Contains(l.Type, "feed+json") {
					out.Linked = true
					if weburl.SameSite(c.Site.Target, l.Href) {
						out.Resp = c.Fetch(fetch.Request{URL: l.Href, Accept: acceptFeed})
						out.Info = feedInfo(out.Resp)
					}
					return out, nil
				}
			}
		}
		reqs := make([]fetch.Request, len(FeedPaths))
		for i, p := range FeedPaths {
			reqs[i] = fetch.Request{URL: c.URL(p), Accept: acceptFeed}
		}
		all := c.FetchAll(reqs)
		out.Resp = all[0]
		for _, r := range all {
			if info := feedInfo(r); info.Kind.IsFeed() {
				out.Resp, out.Info = r, info
				break
			}
		}
		return out, nil
	})

func feedInfo(r *fetch.Response) xmldoc.Info {
	if r == nil || !r.OK() || !r.Complete() {
		return xmldoc.Info{}
	}
	return xmldoc.Detect(r.Body)
}

var docsGatherer = Define(Docs, "The documentation page: api-catalog service-doc, OpenAPI externalDocs, rel=service-doc, homepage links to docs-like pages, else /docs, /documentation, /developers (and /api/docs for APIs under /api).", []AnyKey{Home, Catalog, Spec},
	func(c *Ctx) (*DocsPage, error) {
		home, cat, spec := Get(c, Home), Get(c, Catalog), Get(c, Spec)
		out := &DocsPage{}
		var cands []string
		seen := map[string]bool{}
		add := func(u, src string) {
			if u == "" || seen[u] || !weburl.SameSite(c.Site.Target, u) {
				return
			}
			seen[u] = true
			cands = append(cands, u)
			if out.Source == "" {
				out.Source = src
			}
		}
		if cat.Linkset != nil {
			for _, t := range cat.Linkset.Targets("service-doc") {
				add(t.Href, "api-catalog service-doc")
			}
		}
		if spec.Spec != nil && spec.Spec.ExternalDocs != "" {
			add(spec.Spec.ExternalDocs, "OpenAPI externalDocs")
		}
		header, html := home.LinkedFromHome("service-doc")
		for _, h := range header {
			add(h, "Link header service-doc")
		}
		for _, h := range html {
			add(h, "<link rel=\"service-doc\">")
		}
		if home.Page != nil {
			for _, an := range home.Page.Anchors {
				if u, err := url.Parse(an.Href); err == nil && (docsPath.MatchString(u.Path) || strings.HasPrefix(u.Hostname(), "docs.") || strings.HasPrefix(u.Hostname(), "developer")) {
					add(an.Href, "homepage link")
				}
			}
		}
		isDoc := func(r *fetch.Response) bool {
			// A page identical to the homepage is a server answering every path with it.
			// A page that never finished arriving is not documentation an agent can read.
			return r.OK() && r.Complete() && (r.LooksHTML() || r.ContentType() == "text/markdown") && len(r.Body) > 0 && !bytes.Equal(r.Body, home.Resp.Body)
		}
		if len(cands) > 3 {
			cands = cands[:3]
		}
		if len(cands) == 0 {
			out.Source = "common path"
			for _, p := range DocsPaths {
				// API docs under /api are worth a request only for an API served under /api.
				if strings.HasPrefix(p, "/api/") && !apiUnderAPI(c.Site.Target, spec, cat) {
					continue
				}
				cands = append(cands, c.URL(p))
			}
		}
		reqs := make([]fetch.Request, len(cands))
		for i, u := range cands {
			reqs[i] = fetch.Request{URL: u, Accept: AcceptHTML}
		}
		f, all := c.FirstFound(reqs, isDoc)
		out.Resp, out.Found = f, f != nil
		if f == nil {
			out.Resp = all[0]
		}
		return out, nil
	})

// apiUnderAPI reports an API whose OpenAPI server URL or catalog anchor lives under /api.
func apiUnderAPI(target *url.URL, spec *OpenAPIDoc, cat *APICatalog) bool {
	under := func(raw string) bool {
		u, err := url.Parse(raw)
		return err == nil && weburl.SameSite(target, raw) && (u.Path == "/api" || strings.HasPrefix(u.Path, "/api/"))
	}
	if spec.Spec != nil && under(spec.Spec.ServerURL) {
		return true
	}
	if cat.Linkset != nil {
		for _, ctx := range cat.Linkset.Contexts {
			if under(ctx.Anchor) {
				return true
			}
		}
	}
	return false
}

var errorProbeGatherer = Define(ErrorProbe, "GET a random path that cannot exist under the API's server URL (or /api), to see how errors are reported.", []AnyKey{Home, Spec},
	func(c *Ctx) (*ErrorProbeDoc, error) {
		spec := Get(c, Spec)
		base := c.URL("/api")
		if spec.Spec != nil && spec.Spec.ServerURL != "" && weburl.SameSite(c.Site.Target, spec.Spec.ServerURL) {
			base = strings.TrimSuffix(spec.Spec.ServerURL, "/")
		}
		out := &ErrorProbeDoc{Resp: c.Fetch(fetch.Request{URL: base + "/" + errorProbeSegment(), Accept: "application/json"})}
		if r := out.Resp; r.Err == nil && strings.Contains(r.ContentType(), "json") {
			out.JSON = json.Unmarshal(r.Body, &out.Object) == nil
		}
		return out, nil
	})

var paymentsGatherer = Define(Payments, "Every 402 answer of the scan with the x402 requirements it carries (no request of its own).", []AnyKey{Responses},
	func(c *Ctx) ([]PaymentAnswer, error) {
		var out []PaymentAnswer
		for _, r := range Get(c, Responses) {
			if r.Err == nil && r.Status == http.StatusPaymentRequired {
				out = append(out, PaymentAnswer{Resp: r, Required: wellknown.ParseX402(r.Header.Get("PAYMENT-REQUIRED"), r.Body)})
			}
		}
		return out, nil
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

// WebPlan is the web scan's gatherers.
var WebPlan = func() *Plan {
	gs := []*Gatherer{homeGatherer, markdownGatherer, revalidateGatherer, httpTwinGatherer, robotsGatherer, sitemapGatherer,
		llmsGatherer, agentCardGatherer, catalogGatherer, catalogHeadGatherer, specDefaultGatherer, specGatherer, mcpDefaultGatherer, skillFileGatherer, aiSiteGatherer, skillsIndexGatherer,
		authMetadata(OpenIDConfig, "/.well-known/openid-configuration"), authMetadata(OAuthServer, "/.well-known/oauth-authorization-server"),
		protectedResourceGatherer, x402Gatherer, mcpGatherer, feedGatherer, docsGatherer, errorProbeGatherer, scriptsGatherer}
	gs = append(gs, signalGatherers...)
	var all []AnyKey
	for _, g := range gs {
		all = append(all, NewKey[any](g.Name))
	}
	gs = append(gs, &Gatherer{Name: Responses.Name(), Doc: "Every response of the scan in request order, but the signal documents'.", Requires: all,
		run: func(c *Ctx) (any, error) { return withoutSignals(c, c.sess.Responses()), nil }}, paymentsGatherer)
	return MustPlan(gs...)
}()
