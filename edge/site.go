package edge

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/edge/x402"
)

//go:embed site
var siteFS embed.FS

// doc is one document the edge serves itself.
type doc struct {
	file        string // under site/, with {{BASE}} placeholders; empty for generated documents
	contentType string
	gen         func(base string, cfg Config) []byte
	markdown    string // a text/markdown rendering offered by content negotiation
	maxAge      int
}

var siteDocs = map[string]doc{
	"/":                            {file: "index.html", contentType: "text/html; charset=utf-8", markdown: "index.md", maxAge: 300},
	"/docs":                        {file: "docs.html", contentType: "text/html; charset=utf-8", maxAge: 300},
	"/llms.txt":                    {file: "llms.txt", contentType: "text/plain; charset=utf-8", maxAge: 3600},
	"/robots.txt":                  {file: "robots.txt", contentType: "text/plain; charset=utf-8", maxAge: 3600},
	"/skill.md":                    {file: "skill.md", contentType: "text/markdown; charset=utf-8", maxAge: 3600},
	"/feed.xml":                    {file: "feed.xml", contentType: "application/rss+xml; charset=utf-8", maxAge: 3600},
	"/sitemap.xml":                 {file: "sitemap.xml", contentType: "application/xml; charset=utf-8", maxAge: 3600},
	"/.well-known/agent-card.json": {file: "agent-card.json", contentType: "application/json", maxAge: 3600},
	"/.well-known/ai.json":         {file: "ai.json", contentType: "application/json", maxAge: 3600},
	"/.well-known/api-catalog":     {gen: apiCatalog, contentType: `application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"`, maxAge: 3600},
	"/.well-known/oauth-authorization-server": {gen: authServer, contentType: "application/json", maxAge: 3600},
	"/.well-known/oauth-protected-resource":   {gen: protectedResource, contentType: "application/json", maxAge: 3600},
	"/.well-known/agent-skills/index.json":    {gen: skillsIndex, contentType: "application/json", maxAge: 3600},
	"/.well-known/x402":                       {gen: x402Doc, contentType: "application/json", maxAge: 3600},
}

var (
	rendered      sync.Map // base + path + file → []byte
	renderedCount atomic.Int64
)

const maxRendered = 1024

func render(base string, cfg Config, path string, d doc, file string) []byte {
	return renderTagged(base, cfg, path, d, file).body
}

// renderedDoc is a rendered document with its ETag, computed once: hashing
// inside the WebAssembly module is slow (SHA-256 at about 40 MB/s).
type renderedDoc struct {
	body []byte
	tag  string
}

func renderTagged(base string, cfg Config, path string, d doc, file string) renderedDoc {
	key := base + "\x00" + path + "\x00" + file
	if v, ok := rendered.Load(key); ok {
		return v.(renderedDoc)
	}
	b := renderBody(base, cfg, d, file)
	// Without AGENTREADY_BASE_URL the base comes from each request's Host, so
	// a caller choosing Hosts could grow this map without end: past a bound,
	// documents are rendered per request instead.
	rd := renderedDoc{body: b, tag: etag(b)}
	if renderedCount.Load() < maxRendered {
		if _, loaded := rendered.LoadOrStore(key, rd); !loaded {
			renderedCount.Add(1)
		}
	}
	return rd
}

func renderBody(base string, cfg Config, d doc, file string) []byte {
	if d.gen != nil && file == d.file {
		return d.gen(base, cfg)
	}
	raw, _ := siteFS.ReadFile("site/" + file)
	return []byte(strings.ReplaceAll(string(raw), "{{BASE}}", base))
}

// baseDependent remembers, by path and file, whether a document's bytes
// change with the base URL: rendered under two bases once, so that a new
// document is judged without anyone having to mark it.
var baseDependent sync.Map

func dependsOnBase(cfg Config, path string, d doc, file string) bool {
	key := path + "\x00" + file
	if v, ok := baseDependent.Load(key); ok {
		return v.(bool)
	}
	dep := string(renderBody("http://a.invalid", cfg, d, file)) != string(renderBody("http://b.invalid", cfg, d, file))
	baseDependent.Store(key, dep)
	return dep
}

// cacheFor says how long an answer may be kept. Without AGENTREADY_BASE_URL
// an answer that holds absolute URLs was built from the request's Host, which
// the caller chose: it is then the asker's alone (private, Vary: Host), so
// that no shared cache hands one Host's document to a request for another.
// With a configured base URL every caller gets the same bytes, and any cache
// may keep them.
func (h *Handler) cacheFor(hdr http.Header, maxAge int, fromHost bool) {
	if fromHost && h.cfg.BaseURL == "" {
		hdr.Set("Cache-Control", "private, max-age="+strconv.Itoa(maxAge))
		addVary(hdr, "Host")
		return
	}
	hdr.Set("Cache-Control", "public, max-age="+strconv.Itoa(maxAge))
}

// addVary adds a field to Vary as one comma-separated value (platforms that
// join repeated fields would otherwise disagree on what a client reads).
func addVary(hdr http.Header, field string) {
	if v := hdr.Get("Vary"); v != "" {
		hdr.Set("Vary", v+", "+field)
		return
	}
	hdr.Set("Vary", field)
}

func etag(b []byte) string {
	s := sha256.Sum256(b)
	return `"` + hex.EncodeToString(s[:8]) + `"`
}

func acceptsMarkdown(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part)); mt == "text/markdown" {
			return true
		}
	}
	return false
}

// serveDoc answers one site document: byte-stable, cacheable (ETag, 304),
// CORS-open, and for the homepage negotiated between HTML and markdown.
func (h *Handler) serveDoc(w http.ResponseWriter, r *http.Request, d doc) {
	if r.URL.Path == "/.well-known/x402" && h.cfg.Payment.PayTo == "" {
		// Nothing is sold without a payee: advertise no payment (an empty payTo would be a trap).
		writeError(w, apierr.NotFound, "This deployment takes no payments, so it publishes no x402 resources; the free scan is at /api/scan.")
		return
	}
	base := h.base(r)
	file, ctype := d.file, d.contentType
	hdr := w.Header()
	if d.markdown != "" {
		hdr.Set("Vary", "Accept")
		if acceptsMarkdown(r) {
			file, ctype = d.markdown, "text/markdown; charset=utf-8"
		}
	}
	rd := renderTagged(base, h.cfg, r.URL.Path, d, file)
	body, tag := rd.body, rd.tag
	hdr.Set("Content-Type", ctype)
	if strings.HasPrefix(ctype, "text/html") {
		pageHeaders(hdr)
	}
	hdr.Set("ETag", tag)
	h.cacheFor(hdr, d.maxAge, h.cfg.BaseURL == "" && dependsOnBase(h.cfg, r.URL.Path, d, file))
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case "/":
		hdr.Set("Link", `<`+base+`/.well-known/api-catalog>; rel="api-catalog", <`+base+`/openapi.json>; rel="service-desc"; type="application/vnd.oai.openapi+json", <`+base+`/docs>; rel="service-doc", <`+base+`/llms.txt>; rel="describedby"; type="text/markdown", <`+base+`/.well-known/mcp/server-card>; rel="mcp"`)
	case "/.well-known/api-catalog":
		hdr.Set("Link", `<`+base+`/.well-known/api-catalog>; rel="api-catalog"`)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		return
	}
	w.Write(body)
}

func marshal(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}

func apiCatalog(base string, _ Config) []byte {
	return marshal(map[string]any{"linkset": []map[string]any{{
		"anchor":       base + "/api",
		"service-desc": []map[string]string{{"href": base + "/openapi.json", "type": "application/vnd.oai.openapi+json;version=3.1"}},
		"service-doc":  []map[string]string{{"href": base + "/docs", "type": "text/html"}},
		"service-meta": []map[string]string{{"href": base + "/.well-known/oauth-protected-resource", "type": "application/json"}},
		"status":       []map[string]string{{"href": base + "/healthz", "type": "application/json"}},
	}}})
}

// authServer is RFC 8414 metadata for the anonymous client-credentials token
// endpoint. response_types_supported is left out on purpose: no grant uses
// an authorization endpoint (RFC 8414 erratum 7793), and ["token"] would
// advertise the implicit flow.
func authServer(base string, _ Config) []byte {
	return marshal(map[string]any{
		"issuer":                                base,
		"token_endpoint":                        base + "/api/agent/token",
		"grant_types_supported":                 []string{"client_credentials"},
		"scopes_supported":                      []string{token.Scope},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"service_documentation":                 base + "/docs",
	})
}

func protectedResource(base string, _ Config) []byte {
	return marshal(map[string]any{
		"resource":                 base,
		"authorization_servers":    []string{base},
		"scopes_supported":         []string{token.Scope},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "agentready",
		"resource_documentation":   base + "/docs",
	})
}

func skillsIndex(base string, cfg Config) []byte {
	skill := render(base, cfg, "/skill.md", doc{file: "skill.md"}, "skill.md")
	sum := sha256.Sum256(skill)
	return marshal(map[string]any{
		"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
		"skills": []map[string]string{{"name": "agentready-scan", "type": "skill-md",
			"description": "Scan a website for AI-agent readiness and explain what to fix.", "url": base + "/skill.md",
			"digest": "sha256:" + hex.EncodeToString(sum[:])}},
	})
}

func x402Doc(base string, cfg Config) []byte {
	return marshal(cfg.Payment.V1(base, "deep scans are paid per request over x402 at "+base+x402.GatewayPath))
}
