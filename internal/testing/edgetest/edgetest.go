// Package edgetest is the behavioural test table of the edge. The same table
// runs against every build of the edge handler — native, the WebAssembly
// module hosted by wazero — by giving Run a function that starts the service.
package edgetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/wellknown"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// Keys and settings the table configures.
const (
	TokenKeys = "k1:0123456789abcdef0123456789abcdef"
	OtherKeys = "k1:ffffffffffffffffffffffffffffffff"
	APIKey    = "ar_test_key_0123456789"
	PayTo     = "AgentreadyTestPayee11111111111111111111111"
	FeePayer  = "AgentreadyTestFeePayer111111111111111111111"
)

// Env is the configuration every started service gets.
func Env() map[string]string {
	sum := sha256.Sum256([]byte(APIKey))
	return map[string]string{
		"AGENTREADY_TOKEN_KEYS":         TokenKeys,
		"AGENTREADY_API_KEYS":           "acme-ci:" + hex.EncodeToString(sum[:]),
		"AGENTREADY_FREE_DAILY":         "3",
		"AGENTREADY_TOKEN_DAILY":        "5",
		"AGENTREADY_KEY_DAILY":          "50",
		"AGENTREADY_TOKEN_MINTS_HOURLY": "4",
		"AGENTREADY_PAYTO":              PayTo,
		// Given, so that no stack asks a real facilitator for it at start.
		"AGENTREADY_FEE_PAYER": FeePayer,
	}
}

// Start starts a service (edge in front of an origin) with env and returns its base URL.
type Start func(t *testing.T, env map[string]string) string

type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path string, body string, hdr ...string) (*http.Response, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1] // the client sends this Host to the service's address
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := LoadContract(c.t).Client(c.t).Do(req) // every response is checked against /openapi.json
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func site(t *testing.T, name string) *fixture.Site {
	s, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func envelope(t *testing.T, b []byte) report.ErrorEnvelope {
	t.Helper()
	var e report.ErrorEnvelope
	if json.Unmarshal(b, &e) != nil || e.Code == "" || e.Message == "" || e.Docs == "" || e.Error == "" {
		t.Fatalf("not an error envelope: %s", b)
	}
	return e
}

// Run runs the table.
func Run(t *testing.T, start Start) {
	base := start(t, Env())
	c := client{t, base}
	t.Run("discovery documents", func(t *testing.T) { discovery(t, c) })
	t.Run("site pages", func(t *testing.T) { pages(t, c) })
	t.Run("page security headers", func(t *testing.T) { pageSecurity(t, c) })
	t.Run("Host header", func(t *testing.T) { hostHeader(t, c) })
	t.Run("token issuance", func(t *testing.T) { tokens(t, c) })
	t.Run("credentials", func(t *testing.T) { credentials(t, c) })
	t.Run("badge", func(t *testing.T) { badges(t, c) })
	t.Run("routing and identity", func(t *testing.T) { routing(t, c) })
	t.Run("allowance and x402", func(t *testing.T) { allowance(t, client{t, start(t, Env())}) })
	t.Run("path normalisation", func(t *testing.T) { paths(t, c) })
	t.Run("error envelopes", func(t *testing.T) { errorEnvelopes(t, c) })
	hardening(t, start)
	t.Run("self-scan", func(t *testing.T) { selfScan(t, c) })
	LoadContract(t).RequireSeen(t, "GET /api/scan 200", "GET /api/scan 401", "GET /api/scan 402", "GET /api/badge 200", "GET /api/badge 304",
		"GET /api/badge 400", "POST /api/agent/token 200", "POST /api/agent/token 400", "POST /api/agent/token 429", "POST /api/mcp 200",
		"GET /.well-known/api-catalog 304", "GET /api/* (unknown) 404")
}

func discovery(t *testing.T, c client) {
	resp, b := c.do("GET", "/.well-known/api-catalog", "")
	var ls struct {
		Linkset []map[string]json.RawMessage `json:"linkset"`
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != `application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"` || json.Unmarshal(b, &ls) != nil || len(ls.Linkset) != 1 || ls.Linkset[0]["anchor"] == nil || ls.Linkset[0]["service-desc"] == nil {
		t.Errorf("api-catalog: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	resp, b = c.do("HEAD", "/.well-known/api-catalog", "")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Link"), `rel="api-catalog"`) || len(b) != 0 {
		t.Errorf("HEAD api-catalog: %d %q", resp.StatusCode, resp.Header.Get("Link"))
	}
	var as map[string]any
	_, b = c.do("GET", "/.well-known/oauth-authorization-server", "")
	json.Unmarshal(b, &as)
	if as["issuer"] != c.base || as["token_endpoint"] != c.base+"/api/agent/token" || fmt.Sprint(as["grant_types_supported"]) != "[client_credentials]" ||
		fmt.Sprint(as["scopes_supported"]) != "[scan:read]" || fmt.Sprint(as["token_endpoint_auth_methods_supported"]) != "[none]" || as["response_types_supported"] != nil {
		t.Errorf("RFC 8414 metadata: %v", as)
	}
	var pr map[string]any
	_, b = c.do("GET", "/.well-known/oauth-protected-resource", "")
	json.Unmarshal(b, &pr)
	if pr["resource"] != c.base || fmt.Sprint(pr["authorization_servers"]) != "["+c.base+"]" || fmt.Sprint(pr["bearer_methods_supported"]) != "[header]" || fmt.Sprint(pr["scopes_supported"]) != "[scan:read]" {
		t.Errorf("RFC 9728 metadata: %v", pr)
	}
	for _, p := range []string{"/.well-known/mcp.json", "/.well-known/mcp/server-card", "/openapi.json"} {
		resp, b := c.do("GET", p, "")
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || !json.Valid(b) {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	_, card := c.do("GET", "/.well-known/mcp.json", "")
	if !strings.Contains(string(card), `"url": "`+c.base+`/api/mcp"`) {
		t.Errorf("the server card names %s/api/mcp: %.300s", c.base, card)
	}
	// Byte-stable and cacheable: the same bytes, the same ETag, and 304 on revalidation.
	for _, p := range []string{"/.well-known/api-catalog", "/.well-known/oauth-authorization-server", "/llms.txt", "/robots.txt", "/.well-known/agent-card.json", "/.well-known/agent-skills/index.json"} {
		r1, b1 := c.do("GET", p, "")
		r2, b2 := c.do("GET", p, "")
		if string(b1) != string(b2) || r1.Header.Get("ETag") == "" || r1.Header.Get("ETag") != r2.Header.Get("ETag") || r1.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r1.Header.Get("Cache-Control"), "max-age") {
			t.Errorf("%s is not byte-stable and cacheable", p)
		}
		if r3, _ := c.do("GET", p, "", "If-None-Match", r1.Header.Get("ETag")); r3.StatusCode != 304 {
			t.Errorf("%s: revalidation %d", p, r3.StatusCode)
		}
	}
	_, idx := c.do("GET", "/.well-known/agent-skills/index.json", "")
	_, skill := c.do("GET", "/skill.md", "")
	sum := sha256.Sum256(skill)
	if ix, err := wellknown.ParseSkillsIndex(idx, false); err != nil || ix.Valid != 1 || !strings.Contains(string(idx), hex.EncodeToString(sum[:])) {
		t.Errorf("skills index digest must match skill.md: %s", idx)
	}
}

func pages(t *testing.T, c client) {
	resp, html := c.do("GET", "/", "", "Accept", "text/html")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(resp.Header.Get("Link"), "service-desc") || !strings.Contains(resp.Header.Get("Vary"), "Accept") {
		t.Errorf("homepage: %d %v", resp.StatusCode, resp.Header)
	}
	resp, md := c.do("GET", "/", "", "Accept", "text/markdown")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") || strings.Contains(string(md), "<html") || string(md) == string(html) {
		t.Errorf("markdown negotiation: %q", resp.Header.Get("Content-Type"))
	}
	if resp, _ := c.do("POST", "/llms.txt", "x"); resp.StatusCode != 405 {
		t.Errorf("POST to a document: %d", resp.StatusCode)
	}
}

// pageSecurity: every kind of HTML answer carries the edge's one policy
// (edge/security.go), whichever build answers: the pages, a report page,
// the note of a report that is not there, and the redirect of one without
// a url.
func pageSecurity(t *testing.T, c client) {
	want := map[string]string{
		"Content-Security-Policy": edge.ContentSecurityPolicy,
		"Referrer-Policy":         edge.ReferrerPolicy,
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
	}
	if !strings.Contains(want["Content-Security-Policy"], "frame-ancestors 'none'") || !strings.Contains(want["Content-Security-Policy"], "script-src 'self';") {
		t.Fatalf("the policy admits framing or foreign scripts: %s", want["Content-Security-Policy"])
	}
	for _, p := range []struct {
		method, path string
		status       int
	}{{"GET", "/", 200}, {"GET", "/docs", 200}, {"GET", "/how-we-score", 200}, {"GET", "/showcase", 200}, {"HEAD", "/", 200},
		{"GET", "/report?url=never-scanned.example", 404}, {"GET", "/report", 303}} {
		req, _ := http.NewRequest(p.method, c.base+p.path, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != p.status {
			t.Errorf("%s %s: %d, want %d", p.method, p.path, resp.StatusCode, p.status)
		}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %s %q, want %q", p.method, p.path, k, got, v)
			}
		}
	}
}

// hostHeader: a Host the caller picks chooses nothing a page loads, and a
// document that names the service by it is the asker's alone (private,
// Vary: Host), never handed by the edge's cache to a request for another
// Host. Without AGENTREADY_BASE_URL (native, wazero) the documents are built
// from the Host; with it (Workers, whose fetch cannot pass a Host on) they
// never name the one sent.
func hostHeader(t *testing.T, c client) {
	const evil = "evil.example"
	var as struct{ Issuer string }
	_, b := c.do("GET", "/.well-known/oauth-authorization-server", "", "Host", evil)
	json.Unmarshal(b, &as)
	fromHost := as.Issuer == "http://"+evil
	t.Logf("documents built from the Host: %v (issuer %q)", fromHost, as.Issuer)
	private := func(what string, resp *http.Response) {
		t.Helper()
		if cc := resp.Header.Get("Cache-Control"); fromHost && (!strings.HasPrefix(cc, "private") || !strings.Contains(resp.Header.Get("Vary"), "Host")) {
			t.Errorf("%s from the Host: Cache-Control %q, Vary %q (want private, Vary: Host)", what, cc, resp.Header.Get("Vary"))
		}
	}
	resp, b := c.do("GET", "/", "", "Host", evil, "Accept", "text/html")
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`<script src="/assets/app.js" defer>`)) || !bytes.Contains(b, []byte(`<link rel="stylesheet" href="/assets/app.css">`)) ||
		bytes.Contains(b, []byte(`src="http`)) || bytes.Contains(b, []byte(`stylesheet" href="http`)) {
		t.Errorf("the homepage asked with Host %s loads from elsewhere: %d %.600s", evil, resp.StatusCode, b)
	}
	private("the homepage", resp)
	for _, p := range []string{"/.well-known/mcp.json", "/.well-known/api-catalog", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/llms.txt"} {
		resp, b := c.do("GET", p, "", "Host", evil)
		if resp.StatusCode != 200 || bytes.Contains(b, []byte(evil)) != fromHost {
			t.Errorf("%s with Host %s: %d, names the Host: %v, want %v: %.200s", p, evil, resp.StatusCode, !fromHost, fromHost, b)
			continue
		}
		private(p, resp)
		if _, own := c.do("GET", p, ""); bytes.Contains(own, []byte(evil)) {
			t.Errorf("%s: the edge served %s's document to another Host: %.200s", p, evil, own)
		}
	}
}

func tokens(t *testing.T, c client) {
	resp, b := c.do("POST", "/api/agent/token", `{"grant_type":"client_credentials","scope":"scan:read"}`, "Content-Type", "application/json")
	var tr map[string]any
	json.Unmarshal(b, &tr)
	if resp.StatusCode != 200 || tr["token_type"] != "Bearer" || tr["scope"] != "scan:read" || tr["expires_in"] == nil || tr["access_token"] == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %d %s", resp.StatusCode, b)
	}
	ks, _ := token.ParseKeys(TokenKeys)
	if cl, err := ks.Verify(tr["access_token"].(string), c.base, time.Now()); err != nil || !strings.HasPrefix(cl.Subject, "anon_") {
		t.Errorf("token does not verify: %v", err)
	}
	resp, b = c.do("POST", "/api/agent/token", "grant_type=client_credentials&scope=scan%3Aread", "Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != 200 || !strings.Contains(string(b), "access_token") {
		t.Errorf("form-encoded: %d %s", resp.StatusCode, b)
	}
	for _, tc := range []struct{ ctype, body, code string }{
		{"application/json", `{"grant_type":"password"}`, "unsupported_grant_type"},
		{"application/json", `{"grant_type":"client_credentials","scope":"admin"}`, "invalid_scope"},
		{"application/json", `{"grant_type":`, "invalid_request"},
		{"application/json", `{}`, "invalid_request"},
		{"text/plain", `grant_type=client_credentials`, "invalid_request"},
	} {
		resp, b := c.do("POST", "/api/agent/token", tc.body, "Content-Type", tc.ctype)
		var e map[string]string
		json.Unmarshal(b, &e)
		if resp.StatusCode != 400 || e["error"] != tc.code || e["error_description"] == "" {
			t.Errorf("%s %s: %d %s", tc.ctype, tc.body, resp.StatusCode, b)
		}
	}
	// Minting is limited per address (4 an hour here; two were minted above).
	codes := []int{}
	for i := 0; i < 3; i++ {
		resp, _ := c.do("POST", "/api/agent/token", `{"grant_type":"client_credentials"}`, "Content-Type", "application/json")
		codes = append(codes, resp.StatusCode)
	}
	if fmt.Sprint(codes) != "[200 200 429]" {
		t.Errorf("mint limit: %v", codes)
	}
}

func credentials(t *testing.T, c client) {
	ks, _ := token.ParseKeys(TokenKeys)
	other, _ := token.ParseKeys(OtherKeys)
	now := time.Now()
	valid, _ := ks.Sign(token.Claims{Subject: "anon_x", Scope: token.Scope, Audience: c.base, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	expired, _ := ks.Sign(token.Claims{Subject: "anon_x", Scope: token.Scope, Audience: c.base, IssuedAt: now.Add(-2 * time.Hour).Unix(), Expires: now.Add(-time.Hour).Unix()})
	wrongKey, _ := other.Sign(token.Claims{Subject: "anon_x", Scope: token.Scope, Audience: c.base, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	wrongAud, _ := ks.Sign(token.Claims{Subject: "anon_x", Scope: token.Scope, Audience: "https://elsewhere.example", IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	s := site(t, "empty")
	path := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	resp, _ := c.do("GET", path, "", "Authorization", "Bearer "+valid)
	if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "5" {
		t.Errorf("valid token: %d, limit %q (token tier allows 5)", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	for name, tok := range map[string]string{"expired": expired, "other key": wrongKey, "other audience": wrongAud, "tampered": valid + "x"} {
		resp, b := c.do("GET", path, "", "Authorization", "Bearer "+tok)
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+c.base+`/.well-known/oauth-protected-resource"`) || envelope(t, b).Code != "invalid_token" {
			t.Errorf("%s token: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	unscoped, _ := ks.Sign(token.Claims{Subject: "anon_x", Scope: "monitors:write", Audience: c.base, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	if resp, b := c.do("GET", path, "", "Authorization", "Bearer "+unscoped); resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) || envelope(t, b).Code != "insufficient_scope" {
		t.Errorf("token without scan:read: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, _ = c.do("GET", path, "", "X-API-Key", APIKey)
	if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "50" {
		t.Errorf("API key: %d, limit %q", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	resp, b := c.do("GET", path, "", "X-API-Key", "ar_wrong")
	if resp.StatusCode != 401 || envelope(t, b).Code != "invalid_api_key" {
		t.Errorf("wrong key must be 401, never anonymous: %d %s", resp.StatusCode, b)
	}
}

func badges(t *testing.T, c client) {
	s := site(t, "full")
	path := "/api/badge?url=" + url.QueryEscape(s.URL)
	resp, svg := c.do("GET", path, "")
	var doc struct {
		Role  string `xml:"role,attr"`
		Label string `xml:"aria-label,attr"`
		Title string `xml:"title"`
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" || xml.Unmarshal(svg, &doc) != nil || doc.Role != "img" || !strings.Contains(doc.Label, "98/100 · L3 Optimized") {
		t.Fatalf("badge: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), svg)
	}
	cc := resp.Header.Get("Cache-Control")
	if !strings.Contains(cc, "s-maxage=") || !strings.Contains(cc, "stale-while-revalidate=") || resp.Header.Get("ETag") == "" {
		t.Errorf("badge caching: %q", cc)
	}
	hits := len(s.Hits())
	if r2, b2 := c.do("GET", path, "", "If-None-Match", resp.Header.Get("ETag")); r2.StatusCode != 304 || len(b2) != 0 {
		t.Errorf("badge revalidation: %d", r2.StatusCode)
	}
	if len(s.Hits()) != hits {
		t.Error("a cached badge scanned the site again")
	}
	if _, sq := c.do("GET", path+"&style=flat-square", ""); !strings.Contains(string(sq), "crispEdges") {
		t.Error("flat-square style")
	}
	var sh map[string]any
	if _, b := c.do("GET", path+"&format=shields", ""); json.Unmarshal(b, &sh) != nil || sh["schemaVersion"] != float64(1) || sh["color"] != "4c1" {
		t.Errorf("shields endpoint: %s", b)
	}
	resp, grey := c.do("GET", "/api/badge?url="+url.QueryEscape("http://127.0.0.1:1/"), "")
	if resp.StatusCode != 200 || !strings.Contains(string(grey), "#9f9f9f") || !strings.Contains(resp.Header.Get("Cache-Control"), "max-age=60") {
		t.Errorf("unknown site: %d %s", resp.StatusCode, grey)
	}
	if resp, b := c.do("GET", "/api/badge", ""); resp.StatusCode != 400 || envelope(t, b).Code != "missing_url" {
		t.Errorf("no url: %d", resp.StatusCode)
	}
}

func routing(t *testing.T, c client) {
	// MCP through the edge: the origin sees the caller the edge vouched for.
	ks, _ := token.ParseKeys(TokenKeys)
	now := time.Now()
	tok, _ := ks.Sign(token.Claims{Subject: "anon_mcp", Scope: token.Scope, Audience: c.base, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	cl := mcp.NewClient(&mcp.Implementation{Name: "edge-test", Version: "1"}, nil)
	hc := &http.Client{Transport: LoadContract(t).Wrap(t, bearer{tok})}
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: c.base + "/api/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("MCP through the edge: %v", err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 11 {
		t.Fatalf("tools through the edge: %v", err)
	}
	// A client cannot claim a tier: identity headers it sends are replaced by the edge's.
	s := site(t, "empty")
	resp, b := c.do("GET", "/api/scan?format=json&url="+url.QueryEscape(s.URL), "", identity.HeaderCaller, "key:acme-ci", identity.HeaderCallerSig, "00")
	if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "3" {
		t.Errorf("forged identity through the edge: %d, limit %q: %s", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), b)
	}
	resp, b = c.do("GET", "/api/nope-4f1d", "")
	if resp.StatusCode != 404 || envelope(t, b).Code != "not_found" || resp.Header.Get("RateLimit-Policy") == "" || strings.Contains(string(b), "nope-4f1d") {
		t.Errorf("unknown API path, routed to the origin with the allowance shown, the path not echoed: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	// The origin's counters are the operator's (AGENTREADY_METRICS_ADDR):
	// the edge answers /metrics itself, never forwarding it.
	for _, p := range []string{"/metrics", "//metrics", "/api/../metrics"} {
		if resp, b := c.do("GET", p, ""); resp.StatusCode != 404 || envelope(t, b).Code != "not_found" || strings.Contains(string(b), "agentready_http_requests_total") {
			t.Errorf("GET %s through the edge: %d %.200s", p, resp.StatusCode, b)
		}
	}
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func allowance(t *testing.T, c client) {
	s := site(t, "empty")
	path := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	for i := 3; i >= 1; i-- {
		resp, _ := c.do("GET", path, "")
		h := resp.Header
		reset, _ := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
		delta, _ := strconv.Atoi(h.Get("RateLimit-Reset"))
		if resp.StatusCode != 200 || h.Get("X-RateLimit-Limit") != "3" || h.Get("X-RateLimit-Remaining") != strconv.Itoa(i-1) || h.Get("RateLimit-Remaining") != strconv.Itoa(i-1) ||
			h.Get("RateLimit-Policy") != "3;w=86400" || reset < time.Now().Unix() || delta <= 0 || delta > 86400 || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "RateLimit-Remaining") {
			t.Errorf("scan %d: %d %v", 4-i, resp.StatusCode, h)
		}
	}
	resp, b := c.do("GET", path, "")
	if resp.StatusCode != 402 {
		t.Fatalf("over the allowance: %d %s", resp.StatusCode, b)
	}
	envelope(t, b)
	hdr := resp.Header.Get("PAYMENT-REQUIRED")
	raw, err := base64.StdEncoding.DecodeString(hdr)
	var v2 struct {
		X402Version int `json:"x402Version"`
		Resource    struct{ URL string }
		Accepts     []struct {
			Scheme, Network, Amount, Asset, PayTo string
			MaxTimeoutSeconds                     int
		}
	}
	if err != nil || json.Unmarshal(raw, &v2) != nil || v2.X402Version != 2 || v2.Resource.URL != c.base+"/api/v1/scan-gateway" || len(v2.Accepts) != 1 ||
		v2.Accepts[0].Amount != "100000" || v2.Accepts[0].Network != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" || v2.Accepts[0].Asset != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" || v2.Accepts[0].PayTo != PayTo {
		t.Errorf("v2 PAYMENT-REQUIRED: %s", raw)
	}
	var v1 struct {
		X402Version int `json:"x402Version"`
		Accepts     []struct {
			MaxAmountRequired, Network, Resource, Description string
			MaxTimeoutSeconds                                 int
		}
	}
	if json.Unmarshal(b, &v1) != nil || v1.X402Version != 1 || v1.Accepts[0].MaxAmountRequired != "100000" || v1.Accepts[0].Network != "solana" || v1.Accepts[0].Resource == "" || v1.Accepts[0].MaxTimeoutSeconds == 0 {
		t.Errorf("v1 body: %s", b)
	}
	if p := wellknown.ParseX402(hdr, b); !p.Valid() {
		t.Errorf("our own check 2.11 rejects our 402: %+v", p)
	}
	x402ClientAccepts(t, hdr, b)
	if resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("402 headers: %v", resp.Header)
	}
}

// x402ClientAccepts parses the 402 with the official x402 package's schemas
// (@x402/core, pinned in tests/node): the v2 header and the v1 body.
func x402ClientAccepts(t *testing.T, header string, body []byte) {
	t.Helper()
	node, ok := testenv.OptionalNode(t, "@x402/core")
	if !ok {
		return
	}
	in, _ := json.Marshal(map[string]any{"header": header, "body": json.RawMessage(body)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.NodeDir(), "x402check.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("x402check.mjs: %v", err)
	}
	var got struct {
		V1, V2 struct {
			OK    bool            `json:"ok"`
			Error string          `json:"error"`
			Value json.RawMessage `json:"value"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("x402check.mjs: %v: %s", err, out)
	}
	if !got.V2.OK {
		t.Errorf("@x402/core rejects our PAYMENT-REQUIRED header: %s", got.V2.Error)
	}
	if !got.V1.OK {
		t.Errorf("@x402/core rejects our v1 402 body: %s", got.V1.Error)
	}
}

// Our service scanned by our scanner reaches level 3 with a near-perfect score.
func selfScan(t *testing.T, c client) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
	res, err := sc.Scan(context.Background(), c.base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CurrentLevel != 3 || res.Score.Value < 90 {
		for _, ch := range res.Checks {
			if ch.Status != report.Pass {
				t.Logf("%s %s %s", ch.ID, ch.Status, ch.Message)
			}
		}
		t.Fatalf("self-scan: level %d, score %d", res.CurrentLevel, res.Score.Value)
	}
	for _, id := range []string{"1.1", "1.2", "1.3", "1.4", "1.12", "1.16", "1.17", "2.6", "2.10", "2.11", "3.5", "3.7"} {
		if ch, _ := res.Check(id); ch.Status != report.Pass {
			t.Errorf("self-scan %s: %s — %s", id, ch.Status, ch.Message)
		}
	}
}
