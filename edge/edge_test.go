package edge

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
)

// fakePlatform counts charges and can fail the allowance store; Forward
// records what would reach the origin.
type fakePlatform struct {
	down      bool
	charged   int
	forwarded []*http.Request
}

func (p *fakePlatform) Now() time.Time { return time.Unix(1_800_000_000, 0) }
func (p *fakePlatform) Allow(_ context.Context, _ string, limit int, _ time.Duration, n int) (Decision, error) {
	if p.down {
		return Decision{}, errors.New("store down")
	}
	p.charged += n
	return Decision{Allowed: p.charged <= limit, Limit: limit, Remaining: max(limit-p.charged, 0), ResetAfter: time.Hour, RetryAfter: time.Hour}, nil
}
func (p *fakePlatform) Fetch(context.Context, *http.Request) (*http.Response, error) {
	return nil, errors.New("no origin")
}
func (p *fakePlatform) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	p.forwarded = append(p.forwarded, r)
	for k, v := range respHeaders {
		w.Header()[k] = v
	}
	w.WriteHeader(299)
}
func (p *fakePlatform) CacheGet(string) ([]byte, bool)         { return nil, false }
func (p *fakePlatform) CachePut(string, []byte, time.Duration) {}
func (p *fakePlatform) ClientIP(*http.Request) string          { return "192.0.2.1" }

func serve(h http.Handler, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// envelopeOf fails unless the answer is the error envelope: JSON, four
// non-empty strings, docs an absolute URL.
func envelopeOf(t *testing.T, w *httptest.ResponseRecorder) apierr.Envelope {
	t.Helper()
	var e apierr.Envelope
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q, want application/json", ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" || e.Code == "" || e.Message == "" {
		t.Fatalf("not an error envelope: %s", w.Body.Bytes())
	}
	if u, err := url.Parse(e.Docs); err != nil || !u.IsAbs() || u.Host == "" {
		t.Errorf("docs %q is not an absolute URL", e.Docs)
	}
	return e
}

func TestCanonicalPath(t *testing.T) {
	for raw, want := range map[string]string{
		"/api/scan":               "/api/scan",
		"//api/scan":              "/api/scan",
		"/api///scan":             "/api/scan",
		"/api/./scan":             "/api/scan",
		"/api/x/../scan":          "/api/scan",
		"/api/%2e%2e/api/scan":    "/api/scan",
		"/api/%2E/scan":           "/api/scan",
		"/../../api/scan":         "/api/scan",
		"/api/%73can":             "/api/scan",
		"/api/scan/":              "/api/scan/",
		"/api/scan/..":            "/api/",
		"/api/scan/.":             "/api/scan/.", // as the origin's router leaves it
		"/a/b/../../c":            "/c",
		"/..":                     "/",
		"/api/sc%20an":            "/api/sc an",
		"/api/scan%252Fx":         "/api/scan%2Fx", // a literal "%2F" after decoding is not a slash
		"/.well-known/./mcp.json": "/.well-known/mcp.json",
	} {
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := CanonicalPath(u)
		if !ok || got != want {
			t.Errorf("%s → %q %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"/api%2Fscan", "/api%2fscan", "/x/%2F../api/scan"} {
		u, _ := url.ParseRequestURI(raw)
		if _, ok := CanonicalPath(u); ok {
			t.Errorf("%s: an encoded slash must be refused", raw)
		}
	}
}

// The path the edge routes on is the one it signs and forwards: a scan
// spelled "/api//scan" is charged as a scan and signed as /api/scan.
func TestNormalisedPathIsRoutedSignedAndForwarded(t *testing.T) {
	p := &fakePlatform{}
	h := New(Config{IdentitySecret: []byte("s")}, p)
	w := serve(h, "GET", "/api/./x/..//scan?url=example.com&format=json", "")
	if w.Code != 299 || p.charged != 1 || len(p.forwarded) != 1 {
		t.Fatalf("status %d, charged %d, forwarded %d", w.Code, p.charged, len(p.forwarded))
	}
	r := p.forwarded[0]
	if r.URL.Path != "/api/scan" || r.URL.RawPath != "" || r.URL.RawQuery != "url=example.com&format=json" {
		t.Errorf("forwarded %q raw %q query %q", r.URL.Path, r.URL.RawPath, r.URL.RawQuery)
	}
	w = serve(h, "GET", "/api%2Fscan?url=example.com", "")
	if w.Code != 400 || envelopeOf(t, w).Code != "invalid_path" || p.charged != 1 {
		t.Errorf("encoded slash: %d, charged %d", w.Code, p.charged)
	}
	w = serve(h, "GET", "/.//llms.txt", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "agentready") {
		t.Errorf("a document under a non-canonical path: %d", w.Code)
	}
}

func TestForwardedIdentityVerifiesOnTheNormalisedPath(t *testing.T) {
	var sent http.Header
	p := &fakePlatform{}
	h := New(Config{IdentitySecret: []byte("secret")}, forwardHeaders{p, &sent})
	serve(h, "POST", "//api/mcp", `{}`, "Content-Type", "application/json")
	_, _, _, ok := identity.Verify([]byte("secret"), sent.Get, identity.Request{Method: "POST", Path: "/api/mcp", Body: []byte(`{}`)}, p.Now())
	if !ok {
		t.Errorf("the identity does not verify for /api/mcp: %v", sent)
	}
}

type forwardHeaders struct {
	*fakePlatform
	sent *http.Header
}

func (f forwardHeaders) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	*f.sent = reqHeaders
	f.fakePlatform.Forward(w, r, reqHeaders, respHeaders)
}

func TestFromEnvReadsExactlyEnvKeys(t *testing.T) {
	read := map[string]bool{}
	if _, err := FromEnv(func(k string) string { read[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	for _, k := range EnvKeys {
		if !read[k] {
			t.Errorf("EnvKeys lists %s, which FromEnv does not read", k)
		}
		delete(read, k)
	}
	for k := range read {
		t.Errorf("FromEnv reads %s, which EnvKeys does not list (a host would not pass it on)", k)
	}
}

func TestFromEnvNamesTheBadSetting(t *testing.T) {
	_, err := FromEnv(func(k string) string {
		if k == "AGENTREADY_API_KEYS" {
			return "ci:nothex"
		}
		return ""
	})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Setting != "AGENTREADY_API_KEYS" {
		t.Fatalf("error %v does not name the setting", err)
	}
	w := httptest.NewRecorder()
	Misconfigured(w, ce.Setting)
	if e := envelopeOf(t, w); w.Code != 500 || !strings.Contains(e.Message, "AGENTREADY_API_KEYS") || strings.Contains(e.Message, "nothex") {
		t.Errorf("misconfigured: %d %+v", w.Code, e)
	}
}

// Exported answers for hosts in front of the handler are envelopes too.
func TestHostAnswersAreEnvelopes(t *testing.T) {
	for name, f := range map[string]func(http.ResponseWriter){
		"payload_too_large": PayloadTooLarge, "bad_request": BadRequest, "internal_error": InternalError,
		"origin_unavailable": OriginUnavailable,
	} {
		w := httptest.NewRecorder()
		f(w)
		if e := envelopeOf(t, w); string(e.Code) != name || w.Code < 400 {
			t.Errorf("%s: %d %+v", name, w.Code, e)
		}
	}
}

func TestAllowanceStoreDown(t *testing.T) {
	p := &fakePlatform{down: true}
	h := New(Config{}, p)
	w := serve(h, "GET", "/api/scan?url=example.com", "")
	if w.Code != 503 || envelopeOf(t, w).Code != "rate_limiter_unavailable" || w.Header().Get("Retry-After") == "" {
		t.Errorf("store down: %d %v", w.Code, w.Header())
	}
	// A request that would be refused anyway says why, store or not.
	w = serve(h, "GET", "/api/scan", "")
	if w.Code != 400 || envelopeOf(t, w).Code != "missing_url" {
		t.Errorf("malformed with the store down: %d", w.Code)
	}
}

func TestScanRequestsCheckedBeforeCharging(t *testing.T) {
	p := &fakePlatform{}
	h := New(Config{Allowances: identity.Allowances{Anonymous: 2, Token: 2, APIKey: 2}}, p)
	big := `{"url":"example.com","pad":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, tc := range []struct {
		method, target, body, ctype, idem string
		status                            int
		code                              string
	}{
		{"GET", "/api/scan", "", "", "", 400, "missing_url"},
		{"GET", "/api/scan?url=%20%20", "", "", "", 400, "missing_url"},
		{"GET", "/api/scan?url=ftp://example.com", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=example", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=exa_mple.com", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=http://user:pw@example.com", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=example.com:99999", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=0x7f.1", "", "", "", 400, "invalid_url"},
		{"GET", "/api/scan?url=example.com&format=xml", "", "", "", 400, "unsupported_format"},
		{"POST", "/api/scan", `{"url":"example.com"}`, "text/plain", "", 415, "unsupported_media_type"},
		{"POST", "/api/scan", `{"url":`, "application/json", "", 400, "invalid_json"},
		{"POST", "/api/scan", `{"url":42}`, "application/json", "", 400, "invalid_json"},
		{"POST", "/api/scan", `[]`, "application/json", "", 400, "invalid_json"},
		{"POST", "/api/scan", `{}`, "application/json", "", 400, "missing_url"},
		{"POST", "/api/scan", `{"url":"a..b"}`, "application/json", "", 400, "invalid_url"},
		{"POST", "/api/scan", `{"url":"example.com"}`, "application/json", " ", 400, "invalid_idempotency_key"},
		{"POST", "/api/scan", big, "application/json", "", 413, "payload_too_large"},
	} {
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		if tc.idem != "" {
			r.Header["Idempotency-Key"] = []string{strings.TrimSpace(tc.idem)}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if e := envelopeOf(t, w); w.Code != tc.status || string(e.Code) != tc.code {
			t.Errorf("%s %s %.40s: %d %s, want %d %s", tc.method, tc.target, tc.body, w.Code, e.Code, tc.status, tc.code)
		}
		if w.Header().Get("X-RateLimit-Remaining") != "2" {
			t.Errorf("%s %s: the refusal must show the allowance unspent: %q", tc.method, tc.target, w.Header().Get("X-RateLimit-Remaining"))
		}
		if strings.Contains(w.Body.String(), "xml") || strings.Contains(w.Body.String(), "exa_mple") {
			t.Errorf("the answer echoes the request: %s", w.Body.String())
		}
	}
	if p.charged != 0 || len(p.forwarded) != 0 {
		t.Fatalf("malformed requests were charged (%d) or forwarded (%d)", p.charged, len(p.forwarded))
	}
	for _, tc := range [][2]string{
		{"GET", "/api/scan?url=example.com"},
		{"POST", "/api/scan"},
	} {
		w := serve(h, tc[0], tc[1], `{"url":"https://example.com/x"}`, "Content-Type", "application/json; charset=utf-8", "Idempotency-Key", "k-1")
		if w.Code != 299 {
			t.Errorf("valid %s: %d %s", tc[0], w.Code, w.Body.String())
		}
	}
	if p.charged != 2 {
		t.Errorf("two valid scans, %d charged", p.charged)
	}
}

// Without a payee there is nothing to pay: the answer says when the
// allowance is back instead of advertising a payment to "".
func TestOverAllowance(t *testing.T) {
	for _, payTo := range []string{"", "Payee1111"} {
		p := &fakePlatform{charged: 1}
		cfg := Config{Allowances: identity.Allowances{Anonymous: 1, Token: 1, APIKey: 1}}
		cfg.Payment.PayTo = payTo
		w := serve(New(cfg, p), "GET", "/api/scan?url=example.com", "")
		e := envelopeOf(t, w)
		switch payTo {
		case "":
			if w.Code != 429 || e.Code != "allowance_exhausted" || w.Header().Get("PAYMENT-REQUIRED") != "" || strings.Contains(w.Body.String(), "payTo") ||
				!strings.Contains(e.Message, "retry after 2027-01-15T09:00:00Z (in 1 h 00 min)") || w.Header().Get("Retry-After") != "3600" {
				t.Errorf("no payee: %d %v %s", w.Code, w.Header(), w.Body.String())
			}
		default:
			if w.Code != 402 || e.Code != "payment_required" || w.Header().Get("PAYMENT-REQUIRED") == "" || !strings.Contains(w.Body.String(), `"payTo":"Payee1111"`) {
				t.Errorf("with a payee: %d %s", w.Code, w.Body.String())
			}
		}
	}
}

func TestTokenErrorsAreOAuthAndEnvelope(t *testing.T) {
	h := New(Config{}, &fakePlatform{})
	w := serve(h, "POST", "/api/agent/token", `{"grant_type":"client_credentials"}`, "Content-Type", "application/json")
	var body map[string]string
	json.Unmarshal(w.Body.Bytes(), &body)
	if e := envelopeOf(t, w); w.Code != 503 || e.Error != "temporarily_unavailable" || body["error_description"] == "" || string(e.Code) != e.Error {
		t.Errorf("token without keys: %d %s", w.Code, w.Body.String())
	}
	keys, _ := token.ParseKeys("k1:0123456789abcdef0123456789abcdef")
	h = New(Config{TokenKeys: keys}, &fakePlatform{})
	w = serve(h, "POST", "/api/agent/token", strings.Repeat(" ", 17<<10), "Content-Type", "application/json")
	if w.Code != 413 || envelopeOf(t, w).Code != "payload_too_large" {
		t.Errorf("oversized token request: %d", w.Code)
	}
}

func TestBodyLimit(t *testing.T) {
	p := &fakePlatform{}
	h := New(Config{}, p)
	for _, n := range []int{MaxBody + 1, 3 * MaxBody} {
		w := serve(h, "POST", "/api/mcp", strings.Repeat("x", n), "Content-Type", "application/json")
		if e := envelopeOf(t, w); w.Code != 413 || !strings.Contains(e.Message, "1 MiB") {
			t.Errorf("%d bytes: %d %+v", n, w.Code, e)
		}
	}
	w := serve(h, "POST", "/api/mcp", strings.Repeat("x", MaxBody), "Content-Type", "application/json")
	if w.Code != 299 || len(p.forwarded) != 1 {
		t.Fatalf("a body of exactly MaxBody: %d", w.Code)
	}
	if b, _ := io.ReadAll(p.forwarded[0].Body); len(b) != MaxBody || p.forwarded[0].ContentLength != int64(MaxBody) {
		t.Errorf("forwarded %d bytes (ContentLength %d), want all %d", len(b), p.forwarded[0].ContentLength, MaxBody)
	}
}

// BenchmarkScanRequestChecks is what the checks before charging add to a
// cached scan request: path normalisation, query parsing, the url check.
func BenchmarkScanRequestChecks(b *testing.B) {
	r := httptest.NewRequest("GET", "/api/scan?format=json&url=https%3A%2F%2Fexample.com%2F", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := CanonicalPath(r.URL); !ok {
			b.Fatal("refused")
		}
		if e := checkScan(r, nil); e != nil {
			b.Fatal(e)
		}
	}
}

// Documents rendered for Hosts a caller picks are not kept without bound.
func TestRenderedDocumentsBounded(t *testing.T) {
	h := New(Config{}, &fakePlatform{})
	for i := 0; i < maxRendered+200; i++ {
		r := httptest.NewRequest("GET", "/llms.txt", nil)
		r.Host = "h" + strconv.Itoa(i) + ".example"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 || !strings.Contains(w.Body.String(), r.Host) {
			t.Fatalf("host %s: %d", r.Host, w.Code)
		}
	}
	n := 0
	rendered.Range(func(any, any) bool { n++; return true })
	if n > maxRendered {
		t.Errorf("%d documents kept, bound %d", n, maxRendered)
	}
}

// HEAD /api/scan is a scan (the origin answers it by doing the GET's work),
// so it costs what GET costs; only methods that do no work are free.
func TestHeadScanIsCharged(t *testing.T) {
	p := &fakePlatform{}
	h := New(Config{Allowances: identity.Allowances{Anonymous: 2, Token: 2, APIKey: 2}}, p)
	for i, want := range []int{299, 299, 429} {
		w := serve(h, "HEAD", "/api/scan?format=json&fresh=1&url=example.com", "")
		if w.Code != want {
			t.Errorf("HEAD scan %d: %d, want %d", i+1, w.Code, want)
		}
	}
	if p.charged != 3 || len(p.forwarded) != 2 {
		t.Errorf("three HEAD scans: %d charged, %d forwarded", p.charged, len(p.forwarded))
	}
	if w := serve(h, "OPTIONS", "/api/scan?url=example.com", ""); p.charged != 3 {
		t.Errorf("OPTIONS was charged: %d", w.Code)
	}
}

// A browser page of another site cannot spend a visitor's anonymous
// allowance, by the API (GET, HEAD, POST) or by the report page's form: one
// rule (Sec-Fetch-Site, else Origin). A caller with its own credentials
// spends its own allowance, and requests without browser headers (curl, an
// agent) or from this service's own pages pass.
func TestCrossSiteRequestsDoNotSpendTheVisitorsAllowance(t *testing.T) {
	keySum := sha256.Sum256([]byte("key-1"))
	for _, c := range []struct {
		name, method, target string
		hdr                  []string
		status               int
	}{
		{"GET, another site's Origin", "GET", "/api/scan?url=example.com", []string{"Origin", "https://evil.example"}, 403},
		{"HEAD, Sec-Fetch-Site cross-site", "HEAD", "/api/scan?url=example.com", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"GET, a sibling host", "GET", "/api/scan?url=example.com", []string{"Sec-Fetch-Site", "same-site", "Origin", "https://www.example.com"}, 403},
		{"POST, an opaque origin", "POST", "/api/scan", []string{"Origin", "null", "Content-Type", "application/json"}, 403},
		{"the report page's form from another site", "POST", "/report?url=example.com", []string{"Origin", "https://evil.example"}, 403},
		{"the report page's form, Sec-Fetch-Site only", "POST", "/report?url=example.com", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"GET with an API key, another site's Origin", "GET", "/api/scan?url=example.com", []string{"Origin", "https://app.example", "X-API-Key", "key-1"}, 299},
		{"GET from this service's page", "GET", "/api/scan?url=example.com", []string{"Sec-Fetch-Site", "same-origin", "Origin", "https://evil.example"}, 299},
		{"GET, its own Origin", "GET", "/api/scan?url=example.com", []string{"Origin", "http://example.com"}, 299},
		{"GET, no browser headers", "GET", "/api/scan?url=example.com", nil, 299},
	} {
		p := &fakePlatform{}
		h := New(Config{APIKeys: []APIKey{{Name: "acme", Hash: keySum}}}, p)
		w := serve(h, c.method, c.target, `{"url":"example.com"}`, c.hdr...)
		if w.Code != c.status {
			t.Errorf("%s: %d, want %d %s", c.name, w.Code, c.status, w.Body.String())
		}
		if c.status == 403 {
			if p.charged != 0 || len(p.forwarded) != 0 {
				t.Errorf("%s: %d charged, %d forwarded", c.name, p.charged, len(p.forwarded))
			}
			if strings.Contains(w.Body.String(), "evil.example") {
				t.Errorf("%s: the answer echoes the Origin: %s", c.name, w.Body.String())
			}
			if c.method != "POST" || !strings.HasPrefix(c.target, "/report") {
				if e := envelopeOf(t, w); e.Code != apierr.CrossSiteRequest {
					t.Errorf("%s: code %q", c.name, e.Code)
				}
			}
		}
	}
}
