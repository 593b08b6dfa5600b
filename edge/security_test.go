package edge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

// htmlAnswer is one request the edge answers with HTML.
type htmlAnswer struct {
	name, method, target string
	hdr                  []string
}

// htmlAnswers are the requests of every kind of HTML answer: each site
// document that is HTML (read from the router's table, so a new page is
// covered by being added), the report page and its twin at /?url=, the
// showcase, and the notes and redirects of the report page.
func htmlAnswers() []htmlAnswer {
	var out []htmlAnswer
	for path, d := range siteDocs {
		if strings.HasPrefix(d.contentType, "text/html") {
			out = append(out, htmlAnswer{"document " + path, "GET", path, nil})
		}
	}
	slices.SortFunc(out, func(a, b htmlAnswer) int { return strings.Compare(a.target, b.target) })
	return append(out,
		htmlAnswer{"report", "GET", "/report?url=www.peer.example", nil},
		htmlAnswer{"report at /", "GET", "/?url=www.peer.example", nil},
		htmlAnswer{"report, filtered", "GET", "/report?url=www.peer.example&filter=failed", nil},
		htmlAnswer{"showcase (its origin down: a note)", "GET", "/showcase", nil},
		htmlAnswer{"report of a url too long (a note)", "GET", "/report?url=" + strings.Repeat("a", 2050) + ".com", nil},
		htmlAnswer{"report without a url (a redirect)", "GET", "/report", nil},
		htmlAnswer{"scan from another site (a note)", "POST", "/report?url=www.peer.example", []string{"Origin", "https://elsewhere.example"}},
		htmlAnswer{"scan of a bad url (a note)", "POST", "/report?url=ftp://x.example", nil},
		htmlAnswer{"scan with the origin down (a note)", "POST", "/report?url=www.peer.example", nil},
	)
}

// Every HTML answer carries the one policy: a CSP that admits only the
// service's own scripts, styles and images and no framing, a Referrer-Policy,
// nosniff and X-Frame-Options; and the markup keeps to what that CSP allows
// (no inline script but JSON-LD, no style attribute or element, no event
// handler attribute, nothing loaded from another origin).
func TestEveryHTMLAnswerCarriesThePolicy(t *testing.T) {
	raw, _ := fixtureReport(t, "peer")
	p := &reportPlatform{report: raw, cache: map[string][]byte{}}
	h := New(Config{BaseURL: "https://agentready.example"}, p)
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		"Referrer-Policy":         "strict-origin-when-cross-origin",
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
	}
	docs := 0
	for _, a := range htmlAnswers() {
		w := serve(h, a.method, "https://agentready.example"+a.target, "", append([]string{"Accept", "text/html"}, a.hdr...)...)
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %q is not HTML", a.name, w.Code, w.Header().Get("Content-Type"))
			continue
		}
		if strings.HasPrefix(a.name, "document ") {
			docs++
		}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s (%d): %s is %q, want %q", a.name, w.Code, k, got, v)
			}
		}
		if w.Code == http.StatusSeeOther {
			continue // http.Redirect's one-line body
		}
		for _, problem := range underPolicy(t, w.Body.Bytes()) {
			t.Errorf("%s: %s", a.name, problem)
		}
	}
	if docs < 3 {
		t.Errorf("%d HTML site documents in the router's table, want at least /, /docs and /how-we-score", docs)
	}
}

// underPolicy lists what in page the CSP would block.
func underPolicy(t *testing.T, page []byte) []string {
	t.Helper()
	root, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range all(root, func(*xhtml.Node) bool { return true }) {
		for _, a := range n.Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
				out = append(out, "<"+n.Data+" "+a.Key+"=…>: inline style and handlers are refused")
			}
		}
		src, hasSrc := attr(n, "src")
		switch typ, _ := attr(n, "type"); {
		case n.Data == "style":
			out = append(out, "a <style> element: inline styles are refused")
		case n.Data == "script" && !hasSrc && typ != "application/ld+json":
			out = append(out, "an inline script: refused ("+strings.TrimSpace(text(n))[:min(40, len(strings.TrimSpace(text(n))))]+"…)")
		case hasSrc && !relative(src):
			out = append(out, "<"+n.Data+" src="+src+">: loaded from elsewhere")
		}
		if rel, _ := attr(n, "rel"); n.Data == "link" && (rel == "stylesheet" || rel == "icon") {
			if href, _ := attr(n, "href"); !relative(href) {
				out = append(out, "<link rel="+rel+" href="+href+">: loaded from elsewhere")
			}
		}
	}
	return out
}

// relative is a same-origin reference that no Host header can redirect.
func relative(ref string) bool {
	return strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "//")
}

// hostPlatform answers the origin's server card with URLs from the Host it
// was asked for, as the origin does without AGENTREADY_BASE_URL.
type hostPlatform struct{ reportPlatform }

func (p *hostPlatform) Fetch(ctx context.Context, r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/.well-known/mcp.json" {
		body := `{"remotes":[{"type":"streamable-http","url":"http://` + r.Host + `/api/mcp"}]}`
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
	return p.reportPlatform.Fetch(ctx, r)
}

// hostRequest asks h for target with Host set to host.
func hostRequest(h http.Handler, host, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", target, nil)
	r.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The documents whose URLs are absolute (docs/api.md, "Pages and the Host
// header").
var hostDocuments = []string{"/.well-known/mcp.json", "/.well-known/api-catalog", "/.well-known/oauth-protected-resource",
	"/.well-known/oauth-authorization-server", "/llms.txt"}

// Without AGENTREADY_BASE_URL the Host header chooses nothing a page loads
// (every script, stylesheet, icon, image, form and link is relative), and
// every answer that names the service by that Host is the asker's alone:
// private, Vary: Host, and the edge's own cache keeps each Host's apart.
// With a base URL the Host is never read and any cache may keep the answers.
func TestHostHeaderChoosesNothingShared(t *testing.T) {
	raw, _ := fixtureReport(t, "peer")
	p := &hostPlatform{reportPlatform{report: raw, cache: map[string][]byte{}}}
	h := New(Config{}, p)
	for _, a := range htmlAnswers() {
		if a.method != "GET" {
			continue
		}
		w := hostRequest(h, "evil.example", a.target, "Accept", "text/html")
		if w.Code != http.StatusOK {
			continue
		}
		root, err := xhtml.Parse(bytes.NewReader(w.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range all(root, func(*xhtml.Node) bool { return true }) {
			for _, k := range []string{"src", "href", "action", "data-src"} {
				v, ok := attr(n, k)
				if !ok || (n.Data == "link" && !slices.Contains([]string{"stylesheet", "icon"}, attrOf(n, "rel"))) {
					continue // canonical, alternate and discovery links name the page to machines
				}
				if !relative(v) {
					t.Errorf("%s with Host evil.example: <%s %s=%q>", a.name, n.Data, k, v)
				}
			}
		}
		if cc, vary := w.Header().Get("Cache-Control"), w.Header().Get("Vary"); !strings.HasPrefix(cc, "private") || !strings.Contains(vary, "Host") {
			t.Errorf("%s from the Host: Cache-Control %q, Vary %q (want private, Vary: Host)", a.name, cc, vary)
		}
	}
	for _, path := range hostDocuments {
		evil := hostRequest(h, "evil.example", path)
		good := hostRequest(h, "agentready.example", path)
		if evil.Code != 200 || !strings.Contains(evil.Body.String(), "evil.example") {
			t.Fatalf("%s with Host evil.example: %d %.200s", path, evil.Code, evil.Body.String())
		}
		if cc, vary := evil.Header().Get("Cache-Control"), evil.Header().Get("Vary"); !strings.HasPrefix(cc, "private, max-age=") || !strings.Contains(vary, "Host") {
			t.Errorf("%s from the Host: Cache-Control %q, Vary %q (want private, Vary: Host)", path, cc, vary)
		}
		if strings.Contains(good.Body.String(), "evil.example") || !strings.Contains(good.Body.String(), "agentready.example") {
			t.Errorf("%s: the edge served one Host's document to another: %.200s", path, good.Body.String())
		}
	}
	// A document that names no URL is anyone's, whatever the Host.
	for _, path := range []string{"/assets/app.js", "/assets/app.css", "/favicon.ico"} {
		w := hostRequest(h, "evil.example", path)
		if cc := w.Header().Get("Cache-Control"); w.Code != 200 || !strings.HasPrefix(cc, "public") || strings.Contains(w.Header().Get("Vary"), "Host") {
			t.Errorf("%s: %d, Cache-Control %q, Vary %q (want public)", path, w.Code, cc, w.Header().Get("Vary"))
		}
	}

	based := New(Config{BaseURL: "https://agentready.example"}, &hostPlatform{reportPlatform{report: raw, cache: map[string][]byte{}}})
	for _, path := range append(hostDocuments, "/", "/docs", "/how-we-score", "/report?url=www.peer.example") {
		w := hostRequest(based, "evil.example", path, "Accept", "text/html")
		if path == "/.well-known/mcp.json" {
			// The origin builds the card; behind a base URL it is given the
			// same base (internal/stack), which this platform does not model.
			w.Body.Reset()
		}
		if w.Code != 200 || strings.Contains(w.Body.String(), "evil.example") || !strings.HasPrefix(w.Header().Get("Cache-Control"), "public") || strings.Contains(w.Header().Get("Vary"), "Host") {
			t.Errorf("%s behind a base URL, Host evil.example: %d, Cache-Control %q, Vary %q", path, w.Code, w.Header().Get("Cache-Control"), w.Header().Get("Vary"))
		}
	}
}

func attrOf(n *xhtml.Node, key string) string {
	v, _ := attr(n, key)
	return v
}

// The origin's metrics are never asked for through the edge: /metrics is
// answered 404 at the edge, in every spelling of the path, and nothing is
// forwarded.
func TestMetricsNeverForwarded(t *testing.T) {
	p := &fakePlatform{}
	h := New(Config{}, p)
	for _, target := range []string{"/metrics", "//metrics", "/./metrics", "/api/../metrics", "/metrics?format=prometheus"} {
		w := serve(h, "GET", target, "")
		if e := envelopeOf(t, w); w.Code != 404 || e.Code != "not_found" || strings.Contains(e.Message, "metrics") {
			t.Errorf("GET %s: %d %+v", target, w.Code, e)
		}
	}
	if len(p.forwarded) != 0 {
		u := url.URL{Path: p.forwarded[0].URL.Path}
		t.Errorf("%d requests for the metrics reached the origin (the first: %s)", len(p.forwarded), u.String())
	}
}
