package gather

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/linkset"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/engine/weburl"
)

// The OpenAPI family: the API catalog (RFC 9727), the OpenAPI description
// found by links or common paths, the documentation page it and the
// homepage lead to, and the error probe under the API's base. Its checks
// are in engine/checks/openapi.go.

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

// DocsPage is the documentation page, or the first probe answer when none was found.
type DocsPage struct {
	Resp   *fetch.Response
	Found  bool
	Source string
}

// ErrorProbeDoc is the answer to a path that cannot exist under the API base.
type ErrorProbeDoc struct {
	Resp *fetch.Response
	// JSON is a JSON Content-Type whose body decodes into an object (or
	// null); Object is that object.
	JSON   bool
	Object map[string]any
}

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
