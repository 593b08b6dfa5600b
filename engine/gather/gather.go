package gather

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

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
	"github.com/agentready/agentready/engine/xmldoc"
)

// Accept headers: each request says what it wants.
const (
	AcceptHTML     = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
	AcceptMarkdown = "text/markdown"
	acceptText     = "text/plain,text/markdown;q=0.9,*/*;q=0.5"
	acceptJSON     = "application/json,*/*;q=0.5"
	acceptSpec     = "application/vnd.oai.openapi+json,application/json,application/yaml,text/yaml;q=0.9,*/*;q=0.5"
	acceptLinkset  = "application/linkset+json,application/json;q=0.9"
	acceptFeed     = "application/rss+xml,application/atom+xml,application/feed+json,application/xml;q=0.9,text/xml;q=0.9,*/*;q=0.5"
	acceptXML      = "application/xml,text/xml;q=0.9,*/*;q=0.5"
)

// Paths probed when nothing links to the document.
var (
	SpecPaths = []string{"/openapi.json", "/openapi.yaml", "/swagger.json", "/api-docs", "/api/openapi.json", "/docs/openapi.json", "/v1/openapi.json", "/.well-known/openapi.json"}
	FeedPaths = []string{"/feed", "/feed.xml", "/rss.xml", "/atom.xml", "/index.xml", "/rss"}
	DocsPaths = []string{"/docs", "/documentation", "/developers", "/api/docs"} // /api/docs only for APIs under /api
	MCPPaths  = []string{"/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/mcp.json"}
)

// ErrorProbeSegment is the path segment requested to see how the API reports errors.
const ErrorProbeSegment = "agentready-probe-nonexistent-7f3c9a"

// MaxScripts is how many same-origin scripts 1.18 reads.
const MaxScripts = 5

// UnreachableError ends a scan whose homepage could not be fetched at all.
type UnreachableError struct {
	URL    string
	Reason string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("site unreachable: %s: %s", e.URL, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

type promise struct {
	done chan struct{}
	r    *fetch.Response
}

func (p *promise) get() *fetch.Response { <-p.done; return p.r }

type run struct {
	ctx  context.Context
	sess *fetch.Session
	a    *Artifacts
	wg   sync.WaitGroup

	catalogDone, specDone, pageDone chan struct{}
}

func (g *run) start(req fetch.Request) *promise {
	if req.Round == 0 {
		req.Round = 1
	}
	p := &promise{done: make(chan struct{})}
	go func() {
		p.r = g.sess.Do(g.ctx, req)
		close(p.done)
	}()
	return p
}

func (g *run) fetch(req fetch.Request) *fetch.Response { return g.start(req).get() }

func (g *run) task(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

func (g *run) url(path string) string { return g.a.Origin + path }

// after is the round of a request that needs the given responses.
func after(rs ...*fetch.Response) int {
	m := 0
	for _, r := range rs {
		if r != nil && r.Round > m {
			m = r.Round
		}
	}
	return m + 1
}

// firstFound fetches urls concurrently and returns the first, in list order,
// that accept approves, plus every response.
func (g *run) firstFound(urls []string, accept string, round int, ok func(*fetch.Response) bool) (*fetch.Response, []*fetch.Response) {
	ps := make([]*promise, len(urls))
	for i, u := range urls {
		ps[i] = g.start(fetch.Request{URL: u, Accept: accept, Round: round})
	}
	all := make([]*fetch.Response, len(urls))
	var found *fetch.Response
	for i, p := range ps {
		all[i] = p.get()
		if found == nil && ok(all[i]) {
			found = all[i]
		}
	}
	return found, all
}

func found(r *fetch.Response) bool { return r.Found() }

// Run gathers the artifacts of the site at target (a root URL from weburl.Normalize).
func Run(ctx context.Context, sess *fetch.Session, target *url.URL) (*Artifacts, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &Artifacts{Target: target, Origin: target.Scheme + "://" + target.Host, ScannerOrigin: sess.Origin()}
	g := &run{ctx: ctx, sess: sess, a: a, catalogDone: make(chan struct{}), specDone: make(chan struct{}), pageDone: make(chan struct{})}
	get := func(path, accept string) *promise { return g.start(fetch.Request{URL: g.url(path), Accept: accept}) }

	// Round 1: everything that needs nothing.
	home := get("/", AcceptHTML)
	robotsP := get("/robots.txt", acceptText)
	llms := get("/llms.txt", acceptText)
	card := get("/.well-known/agent-card.json", acceptJSON)
	specDefault := get(SpecPaths[0], acceptSpec)
	skill := get("/skill.md", acceptText)
	ai := get("/.well-known/ai.json", acceptJSON)
	skills := get("/.well-known/agent-skills/index.json", acceptJSON)
	mcp := get(MCPPaths[0], acceptJSON)
	catalog := get("/.well-known/api-catalog", acceptLinkset)
	oidc := get("/.well-known/openid-configuration", acceptJSON)
	oauthAS := get("/.well-known/oauth-authorization-server", acceptJSON)
	prm := get("/.well-known/oauth-protected-resource", acceptJSON)
	x402 := get("/.well-known/x402", acceptJSON)
	md := get("/", AcceptMarkdown)
	var httpProbe *promise
	if target.Scheme == "https" {
		httpProbe = g.start(fetch.Request{URL: "http://" + target.Host + "/", Accept: AcceptHTML, NoRedirect: true, Round: 1})
	}

	h := home.get()
	if h.Err != nil {
		cancel()
		for _, p := range []*promise{robotsP, llms, card, specDefault, skill, ai, skills, mcp, catalog, oidc, oauthAS, prm, x402, md} {
			p.get()
		}
		if httpProbe != nil {
			httpProbe.get()
		}
		return nil, &UnreachableError{URL: g.url("/"), Reason: describe(h.Err), Err: h.Err}
	}
	a.Home = h
	base := target
	if u, err := url.Parse(h.FinalURL); err == nil {
		base = u
	}
	a.HomeLinks = linkset.ParseHeader(h.Header.Values("Link"), base)
	if h.LooksHTML() || (h.OK() && h.ContentType() == "") {
		a.Page = htmlpage.Parse(h.Body, base)
		a.JSONLD = jsonld.Parse(a.Page.JSONLD)
	}
	close(g.pageDone)

	g.task(func() { a.Markdown = md.get() })
	g.task(func() { a.OpenIDConfig = oidc.get() })
	g.task(func() { a.OAuthServer = oauthAS.get() })
	g.task(func() { a.ProtectedRes = prm.get() })
	g.task(func() { a.X402 = x402.get() })
	g.task(func() { a.AISite = ai.get() })
	if httpProbe != nil {
		g.task(func() { a.HTTPProbe = httpProbe.get() })
	}
	g.task(func() { g.robots(robotsP) })
	g.task(func() { g.llms(llms) })
	g.task(func() { g.agentCard(card) })
	g.task(func() { g.catalog(catalog) })
	g.task(func() { g.spec(specDefault) })
	g.task(func() { g.skill(skill) })
	g.task(func() { g.skills(skills) })
	g.task(func() { g.mcp(mcp) })
	g.task(g.feed)
	g.task(g.docs)
	g.task(g.errorProbe)
	g.task(g.revalidate)
	g.task(g.scripts)
	g.wg.Wait()
	a.All = sess.Responses()
	return a, nil
}

// describe turns a transport error into a sentence a site owner can act on;
// fetch words it, so no resolver address or library text reaches a report.
func describe(err error) string { return fetch.Describe(err) }

func (g *run) robots(p *promise) {
	a := g.a
	r := p.get()
	a.Robots = r
	if r.Found() {
		a.RobotsFile = robots.Parse(r.Body)
	}
	robotsURL, _ := url.Parse(g.url("/robots.txt"))
	if a.RobotsFile != nil {
		for _, s := range a.RobotsFile.Sitemaps {
			ref, err := url.Parse(s)
			if err != nil {
				continue
			}
			abs := robotsURL.ResolveReference(ref).String()
			if weburl.SameSite(a.Target, abs) {
				a.SitemapDeclared, a.SitemapURL = true, abs
				break
			}
		}
	}
	if !a.SitemapDeclared {
		a.SitemapURL = g.url("/sitemap.xml")
	}
	a.Sitemap = g.fetch(fetch.Request{URL: a.SitemapURL, Accept: acceptXML, Round: after(r)})
}

func (g *run) llms(p *promise) {
	a := g.a
	r := p.get()
	if !r.Found() {
		if r2 := g.fetch(fetch.Request{URL: g.url("/.well-known/llms.txt"), Accept: acceptText, Round: after(r)}); r2.Found() {
			r = r2
		}
	}
	a.Llms = r
	if r.Found() {
		base, _ := url.Parse(r.FinalURL)
		a.LlmsReport = llmstxt.Validate(r.Body, base)
	}
}

func (g *run) agentCard(p *promise) {
	a := g.a
	r := p.get()
	if !r.Found() {
		if r2 := g.fetch(fetch.Request{URL: g.url("/.well-known/agent.json"), Accept: acceptJSON, Round: after(r)}); r2.Found() {
			r, a.AgentCardLegacy = r2, true
		}
	}
	a.AgentCard = r
	if r.Found() {
		a.AgentCardReport, a.AgentCardErr = agentcard.Validate(r.Body)
	}
}

func (g *run) catalog(p *promise) {
	defer close(g.catalogDone)
	a := g.a
	r := p.get()
	a.Catalog = r
	if !r.Found() {
		return
	}
	base, _ := url.Parse(r.FinalURL)
	a.Linkset, a.LinksetErr = linkset.Parse(r.Body, base)
	// RFC 9727 also asks HEAD to carry the api-catalog relation; only worth asking when GET worked.
	g.task(func() {
		a.CatalogHead = g.fetch(fetch.Request{Method: http.MethodHead, URL: g.url("/.well-known/api-catalog"), Accept: acceptLinkset, Round: after(r)})
	})
}

type specTry struct {
	resp   *fetch.Response
	spec   *openapi.Spec
	err    error
	source string
}

func (g *run) loadSpec(r *fetch.Response, source string) specTry {
	t := specTry{resp: r, source: source}
	if !r.Found() {
		t.err = openapi.ErrNotOpenAPI
		return t
	}
	base, _ := url.Parse(r.FinalURL)
	t.spec, t.err = openapi.Load(r.Body, base)
	return t
}

// spec finds the OpenAPI document: links first (Link header, <link>, api-catalog), then common paths.
func (g *run) spec(def *promise) {
	defer close(g.specDone)
	a := g.a
	<-g.catalogDone
	type cand struct{ url, source string }
	var links []cand
	seen := map[string]bool{}
	addLink := func(u, source string) {
		if u != "" && !seen[u] && weburl.SameSite(a.Target, u) {
			seen[u] = true
			links = append(links, cand{u, source})
		}
	}
	header, html := a.linkedFromHome("service-desc")
	for _, h := range header {
		addLink(h, "Link header")
	}
	for _, h := range html {
		addLink(h, "<link rel=\"service-desc\">")
	}
	if a.Linkset != nil {
		for _, t := range a.Linkset.Targets("service-desc") {
			addLink(t.Href, "api-catalog service-desc")
		}
	}
	var broken *specTry
	settle := func(t specTry) bool {
		if t.spec != nil {
			a.Spec, a.SpecResp, a.SpecSource = t.spec, t.resp, t.source
			return true
		}
		if broken == nil && t.resp.Found() && !errors.Is(t.err, openapi.ErrNotOpenAPI) && mentionsOpenAPI(t.resp.Body) {
			broken = &t
		}
		return false
	}
	if len(links) > 0 {
		round := after(a.Home, a.Catalog)
		ps := make([]*promise, len(links))
		for i, c := range links {
			ps[i] = g.start(fetch.Request{URL: c.url, Accept: acceptSpec, Round: round})
		}
		done := false
		for i, p := range ps {
			if t := g.loadSpec(p.get(), links[i].source); !done && settle(t) {
				done = true
			}
		}
		if done {
			def.get()
			return
		}
	}
	d := def.get()
	if settle(g.loadSpec(d, "common path "+SpecPaths[0])) {
		return
	}
	rest := make([]string, 0, len(SpecPaths)-1)
	for _, p := range SpecPaths[1:] {
		rest = append(rest, g.url(p))
	}
	_, all := g.firstFound(rest, acceptSpec, after(d), found)
	for i, r := range all {
		if settle(g.loadSpec(r, "common path "+SpecPaths[i+1])) {
			return
		}
	}
	if broken != nil {
		a.SpecResp, a.SpecErr, a.SpecSource = broken.resp, broken.err, broken.source
	}
}

// linkedFromHome returns the targets of rel in the homepage's Link header and in its <link> elements.
func (a *Artifacts) linkedFromHome(rel string) (header, html []string) {
	for _, l := range a.HomeLinks {
		if hasRel(l.Rels, rel) {
			header = append(header, l.Href)
		}
	}
	if a.Page != nil {
		for _, l := range a.Page.Links {
			if l.HasRel(rel) {
				html = append(html, l.Href)
			}
		}
	}
	return header, html
}

// mentionsOpenAPI tells a broken description (worth a partial) from an unrelated 200 answer.
func mentionsOpenAPI(b []byte) bool {
	if len(b) > 4096 {
		b = b[:4096]
	}
	l := strings.ToLower(string(b))
	return strings.Contains(l, "openapi") || strings.Contains(l, "swagger")
}

func hasRel(rels []string, r string) bool {
	for _, x := range rels {
		if x == r {
			return true
		}
	}
	return false
}

func (g *run) skill(p *promise) {
	r := p.get()
	if !r.Found() {
		if r2 := g.fetch(fetch.Request{URL: g.url("/SKILL.md"), Accept: acceptText, Round: after(r)}); r2.Found() {
			r = r2
		}
	}
	g.a.SkillFile = r
}

func (g *run) skills(p *promise) {
	r := p.get()
	if !r.Found() {
		if r2 := g.fetch(fetch.Request{URL: g.url("/.well-known/skills/index.json"), Accept: acceptJSON, Round: after(r)}); r2.Found() {
			r, g.a.SkillsV01 = r2, true
		}
	}
	g.a.SkillsIndex = r
}

func (g *run) mcp(p *promise) {
	a := g.a
	r := p.get()
	if !r.Found() {
		var urls []string
		if a.Page != nil {
			for _, l := range a.Page.Links {
				if l.HasRel("mcp") && weburl.SameSite(a.Target, l.Href) && !strings.HasSuffix(l.Href, MCPPaths[0]) {
					urls = append(urls, l.Href)
					break
				}
			}
		}
		for _, p := range MCPPaths[1:] {
			urls = append(urls, g.url(p))
		}
		if f, _ := g.firstFound(urls, acceptJSON, after(r, a.Home), found); f != nil {
			r = f
		}
	}
	a.MCPCardResp = r
	if !r.Found() {
		return
	}
	base, _ := url.Parse(r.FinalURL)
	a.MCPCard, a.MCPCardErr = mcpcard.Parse(r.Body, base)
	if a.MCPCard == nil {
		return
	}
	var endpoint string
	for _, e := range a.MCPCard.Endpoints {
		if weburl.SameSite(a.Target, e) {
			endpoint = e
			break
		}
	}
	if endpoint == "" {
		return
	}
	g.probeMCP(endpoint, r)
}

func (g *run) probeMCP(endpoint string, card *fetch.Response) {
	pr := &g.a.MCPProbe
	pr.Endpoint = endpoint
	post := func(body []byte, h map[string]string, round int) *promise {
		// No Origin header: MCP servers rightly refuse cross-origin browser calls (DNS-rebinding protection).
		return g.start(fetch.Request{Method: http.MethodPost, URL: endpoint, Accept: mcpcard.Accept, Body: body, Header: h, Round: round, MaxBody: 1 << 20, NoOrigin: true})
	}
	db, dh := mcpcard.DiscoverRequest()
	ib, ih := mcpcard.InitializeRequest()
	modernP, legacyP := post(db, dh, after(card)), post(ib, ih, after(card))
	modern, legacy := modernP.get(), legacyP.get()
	ok := func(r *fetch.Response) bool {
		if !r.OK() {
			return false
		}
		rep, err := mcpcard.ReadReply(r.ContentType(), r.Body)
		return err == nil && rep.Error == nil
	}
	pr.Modern, pr.Legacy = ok(modern), ok(legacy)
	if !pr.Modern && !pr.Legacy {
		switch {
		case legacy.Err != nil:
			pr.Error = describe(legacy.Err)
		default:
			pr.Error = fmt.Sprintf("server/discover answered %d and initialize answered %d without a JSON-RPC result", modern.Status, legacy.Status)
		}
		return
	}
	if len(g.a.MCPCard.Tools) > 0 {
		pr.Tools, pr.ToolsSource = g.a.MCPCard.Tools, "card"
		return
	}
	var list *fetch.Response
	if pr.Modern {
		b, h := mcpcard.ModernToolsListRequest()
		list = post(b, h, after(modern)).get()
	} else {
		session := legacy.Header.Get("Mcp-Session-Id")
		h := map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": mcpcard.LegacyVersion}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		notice := post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h, after(legacy)).get()
		b, lh := mcpcard.LegacyToolsListRequest(session)
		list = post(b, lh, after(notice)).get()
	}
	if rep, err := mcpcard.ReadReply(list.ContentType(), list.Body); err == nil && rep.Error == nil {
		if tools, err := mcpcard.Tools(rep.Result); err == nil {
			pr.Tools, pr.ToolsSource = tools, "tools/list"
		}
	}
}

func isFeed(r *fetch.Response) bool { return r.OK() && xmldoc.Detect(r.Body).Kind.IsFeed() }

func (g *run) feed() {
	a := g.a
	if a.Page != nil {
		for _, l := range a.Page.Links {
			if !l.HasRel("alternate") || l.Href == "" {
				continue
			}
			if strings.Contains(l.Type, "rss") || strings.Contains(l.Type, "atom") || strings.Contains(l.Type, "feed+json") {
				a.FeedLinked = true
				if weburl.SameSite(a.Target, l.Href) {
					a.Feed = g.fetch(fetch.Request{URL: l.Href, Accept: acceptFeed, Round: after(a.Home)})
				}
				return
			}
		}
	}
	urls := make([]string, len(FeedPaths))
	for i, p := range FeedPaths {
		urls[i] = g.url(p)
	}
	f, all := g.firstFound(urls, acceptFeed, after(a.Home), isFeed)
	if f == nil {
		f = all[0]
	}
	a.Feed = f
}

var docsPath = regexp.MustCompile(`(?i)^/(docs?|documentation|developers?|api-docs|api-reference|reference|dev)(/|$)`)

func (g *run) docs() {
	a := g.a
	<-g.specDone
	var cands []string
	seen := map[string]bool{}
	add := func(u, src string) {
		if u == "" || seen[u] || !weburl.SameSite(a.Target, u) {
			return
		}
		seen[u] = true
		cands = append(cands, u)
		if a.DocsSource == "" {
			a.DocsSource = src
		}
	}
	if a.Linkset != nil {
		for _, t := range a.Linkset.Targets("service-doc") {
			add(t.Href, "api-catalog service-doc")
		}
	}
	if a.Spec != nil && a.Spec.ExternalDocs != "" {
		add(a.Spec.ExternalDocs, "OpenAPI externalDocs")
	}
	header, html := a.linkedFromHome("service-doc")
	for _, h := range header {
		add(h, "Link header service-doc")
	}
	for _, h := range html {
		add(h, "<link rel=\"service-doc\">")
	}
	if a.Page != nil {
		for _, an := range a.Page.Anchors {
			if u, err := url.Parse(an.Href); err == nil && (docsPath.MatchString(u.Path) || strings.HasPrefix(u.Hostname(), "docs.") || strings.HasPrefix(u.Hostname(), "developer")) {
				add(an.Href, "homepage link")
			}
		}
	}
	round := after(a.Home, a.Catalog, a.SpecResp)
	isDoc := func(r *fetch.Response) bool {
		// A page identical to the homepage is a server answering every path with it.
		return r.OK() && (r.LooksHTML() || r.ContentType() == "text/markdown") && len(r.Body) > 0 && !bytes.Equal(r.Body, a.Home.Body)
	}
	if len(cands) > 3 {
		cands = cands[:3]
	}
	if len(cands) > 0 {
		f, all := g.firstFound(cands, AcceptHTML, round, isDoc)
		a.Docs, a.DocsFound = f, f != nil
		if f == nil {
			a.Docs = all[0]
		}
		return
	}
	a.DocsSource = "common path"
	var urls []string
	for _, p := range DocsPaths {
		// API docs under /api are worth a request only for an API served under /api.
		if strings.HasPrefix(p, "/api/") && !g.apiUnderAPI() {
			continue
		}
		urls = append(urls, g.url(p))
	}
	f, all := g.firstFound(urls, AcceptHTML, round, isDoc)
	a.Docs, a.DocsFound = f, f != nil
	if f == nil {
		a.Docs = all[0]
	}
}

// apiUnderAPI reports an API whose OpenAPI server URL or catalog anchor lives under /api.
func (g *run) apiUnderAPI() bool {
	a := g.a
	under := func(raw string) bool {
		u, err := url.Parse(raw)
		return err == nil && weburl.SameSite(a.Target, raw) && (u.Path == "/api" || strings.HasPrefix(u.Path, "/api/"))
	}
	if a.Spec != nil && under(a.Spec.ServerURL) {
		return true
	}
	if a.Linkset != nil {
		for _, c := range a.Linkset.Contexts {
			if under(c.Anchor) {
				return true
			}
		}
	}
	return false
}

func (g *run) errorProbe() {
	a := g.a
	<-g.specDone
	base := g.url("/api")
	if a.Spec != nil && a.Spec.ServerURL != "" && weburl.SameSite(a.Target, a.Spec.ServerURL) {
		base = strings.TrimSuffix(a.Spec.ServerURL, "/")
	}
	a.ErrorProbe = g.fetch(fetch.Request{URL: base + "/" + ErrorProbeSegment, Accept: "application/json", Round: after(a.Home, a.SpecResp)})
}

// revalidate re-requests the homepage conditionally. Without Cache-Control
// check 3.6 is partial whatever the answer, so the request is only worth
// making when the homepage has both a validator and Cache-Control.
func (g *run) revalidate() {
	h := g.a.Home
	if h.Header.Get("Cache-Control") == "" {
		return
	}
	hdr := map[string]string{}
	if et := h.Header.Get("ETag"); et != "" {
		hdr["If-None-Match"] = et
	} else if lm := h.Header.Get("Last-Modified"); lm != "" {
		hdr["If-Modified-Since"] = lm
	} else {
		return
	}
	g.a.Revalidated = g.fetch(fetch.Request{URL: g.url("/"), Accept: AcceptHTML, Header: hdr, Round: after(h)})
}

// WebMCPRegister matches a WebMCP registration in text.
var WebMCPRegister = regexp.MustCompile(`modelContext\s*(\??\.\s*|\[\s*["']\s*)registerTool`)

func (g *run) scripts() {
	a := g.a
	if a.Page == nil || a.Page.ToolForms > 0 {
		return
	}
	var srcs []string
	for _, s := range a.Page.Scripts {
		if WebMCPRegister.MatchString(s.Inline) {
			return
		}
		if s.Src != "" && weburl.SameOrigin(a.Target, s.Src) && len(srcs) < MaxScripts && (s.Type == "" || strings.Contains(s.Type, "javascript") || s.Type == "module") {
			srcs = append(srcs, s.Src)
		}
	}
	ps := make([]*promise, len(srcs))
	for i, s := range srcs {
		ps[i] = g.start(fetch.Request{URL: s, Accept: "application/javascript,text/javascript,*/*;q=0.5", MaxBody: 512 << 10, Round: after(a.Home)})
	}
	for _, p := range ps {
		a.Scripts = append(a.Scripts, p.get())
	}
}
