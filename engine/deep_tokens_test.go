package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// sdkSite is a stateful fixture site built the way a site on the official
// SDKs is: an OAuth authorization server (RFC 8414 metadata and a
// client_credentials token endpoint that counts every token it issues), the
// protected-resource metadata (RFC 9728, served by the MCP Go SDK's
// handler) pointing at it, an MCP endpoint served by the MCP Go SDK behind
// the SDK's bearer-token middleware, an A2A agent card (v0.3, as the A2A
// SDKs write it) whose OAuth security scheme names the same token URL, with
// its JSON-RPC interface behind the same middleware, and an OpenAPI
// description whose oauth2 clientCredentials flow names that token URL too,
// for an API behind the middleware.
type sdkSite struct {
	*httptest.Server
	opt sdkSiteOptions

	mu       sync.Mutex
	issued   []string // one line per token issued: the request that got it
	tokens   map[string]bool
	authed   map[string]int // requests that passed the middleware, by path
	bearers  map[string]int // requests that carried an Authorization header, by path
	sessions map[string]bool
	closed   map[string]bool
}

type sdkSiteOptions struct {
	// tokenOnAnyRequest: the token endpoint issues a token to any request,
	// whatever its method and grant (some servers built on OAuth SDKs do:
	// a GET, or a POST with no grant_type, counts as a token issued).
	tokenOnAnyRequest bool
	// prmIssuer is how the root protected-resource metadata spells the
	// authorization server (nil: the issuer exactly as the AS metadata
	// names it, the origin).
	prmIssuer func(origin string) string
	// mcpPRM: the MCP endpoint's challenge points at protected-resource
	// metadata of its own (/.well-known/oauth-protected-resource/mcp, where
	// RFC 9728 puts the metadata of the resource /mcp), which names the same
	// authorization server in another spelling.
	mcpPRM bool
	// contractTokens: the agent card also declares the token endpoint as a
	// level-5 scopedTokens contract (capabilities.extensions[].params).
	contractTokens bool
	// prmResource is the root protected-resource metadata's resource (nil:
	// the origin); the MCP Go SDK's example names its MCP endpoint there.
	prmResource func(origin string) string
	// otherAS: the MCP endpoint's protected-resource metadata and the agent
	// card's security scheme name another authorization server, whose
	// tokens the scan does not hold.
	otherAS bool
}

const (
	sdkScope    = "orders:read"
	sdkOtherIdP = "https://login.other-idp.example"
)

func startSDKSite(t *testing.T, opt sdkSiteOptions) *sdkSite {
	t.Helper()
	s := &sdkSite{opt: opt, tokens: map[string]bool{}, authed: map[string]int{}, bearers: map[string]int{}, sessions: map[string]bool{}, closed: map[string]bool{}}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	o := s.URL
	prmIssuer := o
	if opt.prmIssuer != nil {
		prmIssuer = opt.prmIssuer(o)
	}
	rootPRM := o + "/.well-known/oauth-protected-resource"

	// The authorization server.
	mux.Handle("GET /.well-known/oauth-authorization-server", jsonHandler(&oauthex.AuthServerMeta{
		Issuer:                            o,
		TokenEndpoint:                     o + "/oauth/token",
		JWKSURI:                           o + "/oauth/jwks.json",
		ScopesSupported:                   []string{sdkScope},
		ResponseTypesSupported:            []string{"token"},
		GrantTypesSupported:               []string{"client_credentials"},
		TokenEndpointAuthMethodsSupported: []string{"none"},
	}))
	mux.HandleFunc("/oauth/token", s.token)

	// The protected resources' metadata.
	resource := o
	if opt.prmResource != nil {
		resource = opt.prmResource(o)
	}
	mux.Handle("GET /.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{prmIssuer},
		ScopesSupported:        []string{sdkScope},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Orders",
	}))
	mcpPRM := rootPRM
	if opt.mcpPRM || opt.otherAS {
		as := o + "/"
		if opt.otherAS {
			as = sdkOtherIdP
		}
		mcpPRM = rootPRM + "/mcp"
		mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:             o + "/mcp",
			AuthorizationServers: []string{as},
			ScopesSupported:      []string{sdkScope},
		}))
	}
	// protect is the SDK's bearer middleware, plus what the fixture counts:
	// who sends a token where, what got through, and the MCP sessions the
	// SDK server opens and those ended with DELETE.
	protect := func(path, prm string, h http.Handler) http.Handler {
		inner := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm, Scopes: []string{sdkScope}})(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.mu.Lock()
				s.authed[path]++
				s.mu.Unlock()
				h.ServeHTTP(w, r)
			}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w}
			inner.ServeHTTP(sw, r)
			s.mu.Lock()
			defer s.mu.Unlock()
			if r.Header.Get("Authorization") != "" {
				s.bearers[path]++
			}
			if id := sw.Header().Get("Mcp-Session-Id"); id != "" && r.Method == http.MethodPost {
				s.sessions[id] = true
			}
			if id := r.Header.Get("Mcp-Session-Id"); id != "" && r.Method == http.MethodDelete && sw.status < 300 {
				s.closed[id] = true
			}
		})
	}

	// The MCP server, on the official Go SDK (stateful: sessions).
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1.0.0"}, nil)
	type lookup struct {
		ID string `json:"id" jsonschema:"the order id"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "get_order", Description: "Fetch one order with its lines, totals and shipping state."},
		func(context.Context, *mcp.CallToolRequest, lookup) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	mux.Handle("/mcp", protect("/mcp", mcpPRM, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	mux.Handle("GET /.well-known/mcp/server-card.json", jsonHandler(map[string]any{
		"name": "com.example/orders", "version": "1.0.0", "description": "Orders over MCP.",
		"remotes": []map[string]any{{"type": "streamable-http", "url": o + "/mcp"}},
	}))

	// The A2A agent: a v0.3 card with an OAuth 2.0 client-credentials
	// security scheme at the same token URL, and its JSON-RPC interface.
	tokenURL := o + "/oauth/token"
	if opt.otherAS {
		tokenURL = sdkOtherIdP + "/oauth2/token"
	}
	card := map[string]any{
		"name": "Orders agent", "description": "Answers questions about orders.", "version": "1.0.0",
		"protocolVersion": "0.3.0", "url": o + "/a2a", "preferredTransport": "JSONRPC",
		"capabilities":       map[string]any{"streaming": false, "pushNotifications": false},
		"defaultInputModes":  []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"},
		"skills":             []map[string]any{{"id": "orders", "name": "Orders", "description": "Looks up orders.", "tags": []string{"orders"}}},
		"securitySchemes": map[string]any{"oauth": map[string]any{"type": "oauth2", "flows": map[string]any{
			"clientCredentials": map[string]any{"tokenUrl": tokenURL, "scopes": map[string]string{sdkScope: "Read orders"}}}}},
		"security":                          []map[string][]string{{"oauth": {sdkScope}}},
		"supportsAuthenticatedExtendedCard": true,
	}
	if opt.contractTokens {
		card["capabilities"].(map[string]any)["extensions"] = []map[string]any{{
			"uri": "https://agentready.example/ext/contract", "params": map[string]any{
				"scopedTokens": map[string]any{"tokenEndpoint": o + "/oauth/token", "scopes": []string{sdkScope}}}}}
	}
	mux.Handle("GET /.well-known/agent-card.json", jsonHandler(card))
	mux.Handle("/a2a", protect("/a2a", rootPRM, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req) != nil {
			http.Error(w, "POST JSON-RPC", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "agent/getAuthenticatedExtendedCard" {
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": card})
	})))

	// The API and its description.
	mux.Handle("GET /openapi.json", jsonHandler(map[string]any{
		"openapi": "3.1.0", "info": map[string]any{"title": "Orders API", "version": "1.0.0"},
		"servers": []map[string]any{{"url": o + "/api"}},
		"components": map[string]any{"securitySchemes": map[string]any{"oauth": map[string]any{"type": "oauth2", "flows": map[string]any{
			"clientCredentials": map[string]any{"tokenUrl": o + "/oauth/token", "scopes": map[string]string{sdkScope: "Read orders"}}}}}},
		"security": []map[string][]string{{"oauth": {sdkScope}}},
		"paths": map[string]any{
			"/orders": map[string]any{"get": map[string]any{"operationId": "listOrders", "responses": map[string]any{
				"200": map[string]any{"description": "Orders"},
				"401": map[string]any{"description": "No token", "content": map[string]any{"text/plain": map[string]any{}}}}}},
		},
	}))
	mux.Handle("/api/orders", protect("/api/orders", rootPRM, jsonHandler(map[string]any{"orders": []any{}})))
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "GET")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		jsonHandler(map[string]any{"name": "Orders API"}).ServeHTTP(w, r)
	})

	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders</title>
<link rel="service-desc" href="/openapi.json" type="application/vnd.oai.openapi+json"></head>
<body><h1>Orders</h1><p>Orders over MCP, A2A and a REST API, all behind one OAuth authorization server.</p></body></html>`)
	})
	return s
}

func jsonHandler(v any) http.Handler {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// token is the token endpoint: client_credentials without client
// authentication ("none"), a form POST; with tokenOnAnyRequest, any request.
func (s *sdkSite) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	grant := r.PostForm.Get("grant_type")
	if !s.opt.tokenOnAnyRequest {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, `{"error":"invalid_request"}`)
			return
		}
		if grant != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"unsupported_grant_type"}`)
			return
		}
	}
	b := make([]byte, 16)
	rand.Read(b)
	tok := "tok-" + hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = true
	s.issued = append(s.issued, fmt.Sprintf("%s %s (grant_type %q, scope %q, Accept %q, Origin %q)", r.Method, r.URL.Path, grant, r.PostForm.Get("scope"), r.Header.Get("Accept"), r.Header.Get("Origin")))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": sdkScope})
}

func (s *sdkSite) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	ok := s.tokens[tok]
	s.mu.Unlock()
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{sdkScope}, Expiration: time.Now().Add(time.Hour), UserID: "agent"}, nil
}

func (s *sdkSite) issuedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// counts are the requests that passed the bearer middleware and those that
// carried a token at all, by path, and the MCP sessions opened and those
// still open.
func (s *sdkSite) counts() (authed, bearers map[string]int, opened int, open []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.sessions {
		if !s.closed[id] {
			open = append(open, id)
		}
	}
	return maps.Clone(s.authed), maps.Clone(s.bearers), len(s.sessions), open
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// A deep scan obtains at most one token per authorization server and
// reuses it: the fixture's token endpoint counts what it issues during one
// deep scan, and a second token fails the test, whatever the site does to
// invite one (a token endpoint that issues on any request, the issuer
// spelt two ways, a second protected-resource metadata for the MCP
// endpoint, the token endpoint declared again in the agent card). The one
// token opens the MCP endpoint (whose sessions are still ended with
// DELETE), the A2A interface and the API, and goes nowhere that another
// authorization server protects. Every probe's verdict is pinned.
func TestDeepScanOneTokenPerAuthorizationServer(t *testing.T) {
	base := map[string]report.Status{
		"mcp.live": report.Pass, "oauth.metadata": report.Pass, "oauth.challenge": report.Pass, "a2a.interfaces": report.Pass,
		"api.servers": report.Pass, "api.errors": report.Pass, "level5.contract": report.NA, "pages.sample": report.NA,
	}
	with := func(over map[string]report.Status) map[string]report.Status {
		out := maps.Clone(base)
		maps.Copy(out, over)
		return out
	}
	// Where the token goes: the MCP endpoint after its 401, the A2A
	// interface (its card names the token URL) and the API.
	everywhere := map[string]bool{"/mcp": true, "/a2a": true, "/api/orders": true}
	for _, tc := range []struct {
		name     string
		opt      sdkSiteOptions
		verdicts map[string]report.Status
		words    map[string][]string // words a probe's message (or its details) must hold
		tokenTo  map[string]bool     // the paths the token reaches
	}{
		{"sdk site", sdkSiteOptions{}, base, map[string][]string{
			"mcp.live":        {"asked for a token (401 with a Bearer challenge) and accepted the deep scan's", "It lists 1 tool"},
			"a2a.interfaces":  {"returned its extended card", `security scheme "oauth"`},
			"oauth.metadata":  {"answered 200 to the scan's client_credentials request"},
			"oauth.challenge": {"without it answered 401", "with it answered 200"},
		}, everywhere},
		// Before: oauth.metadata's GET of the token endpoint was a second token.
		{"token on any request", sdkSiteOptions{tokenOnAnyRequest: true}, base, nil, everywhere},
		{"issuer spelt with a trailing slash", sdkSiteOptions{prmIssuer: func(o string) string { return o + "/" }},
			with(map[string]report.Status{"oauth.metadata": report.Partial}), map[string][]string{"oauth.metadata": {"character for character"}}, everywhere},
		{"MCP resource metadata of its own", sdkSiteOptions{mcpPRM: true, prmIssuer: func(o string) string { return "HTTP" + strings.TrimPrefix(o, "http") }},
			with(map[string]report.Status{"oauth.metadata": report.Partial}), map[string][]string{"mcp.live": {"accepted the deep scan's"}}, everywhere},
		// Before: level5.contract's GET of the token endpoint was a token too.
		{"token endpoint declared in the agent card", sdkSiteOptions{contractTokens: true, tokenOnAnyRequest: true},
			with(map[string]report.Status{"level5.contract": report.Pass}), map[string][]string{"level5.contract": {"not sent twice"}}, everywhere},
		{"root metadata for the MCP endpoint (the SDK example's layout)", sdkSiteOptions{prmResource: func(o string) string { return o + "/mcp" }},
			with(map[string]report.Status{"oauth.metadata": report.Partial}), map[string][]string{
				"oauth.metadata":  {"RFC 9728 §3.3"},
				"oauth.challenge": {"/mcp (the protected-resource metadata's resource) without it answered 401"},
			}, map[string]bool{"/mcp": true, "/a2a": true}},
		{"another authorization server protects MCP and A2A", sdkSiteOptions{otherAS: true},
			with(map[string]report.Status{"mcp.live": report.Fail, "a2a.interfaces": report.Partial}), map[string][]string{
				"mcp.live":       {"HTTP 401", "does not list the authorization server", "one token per scan"},
				"a2a.interfaces": {"asks for credentials (HTTP 401)"},
			}, map[string]bool{"/api/orders": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := startSDKSite(t, tc.opt)
			res, _, err := loopbackScanner(30*time.Second).DeepScan(context.Background(), site.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			issued := site.issuedTokens()
			if len(issued) != 1 {
				t.Errorf("%d tokens issued during one deep scan, want 1 (at most one per authorization server, and this one offers anonymous client credentials):\n  %s",
					len(issued), strings.Join(issued, "\n  "))
			}
			authed, bearers, opened, open := site.counts()
			for _, path := range []string{"/mcp", "/a2a", "/api/orders"} {
				switch {
				case tc.tokenTo[path] && authed[path] == 0:
					t.Errorf("%s never got the scan's token through", path)
				case !tc.tokenTo[path] && bearers[path] != 0:
					t.Errorf("%s was sent a token %d times, but another authorization server protects it", path, bearers[path])
				}
			}
			if tc.tokenTo["/mcp"] && tc.verdicts["mcp.live"] == report.Pass && opened == 0 {
				t.Error("no MCP session was opened with the token")
			}
			if len(open) != 0 {
				t.Errorf("MCP sessions left open: %v of %d (each must end with DELETE, token and all)", open, opened)
			}
			got := map[string]report.DeepProbe{}
			for _, p := range res.Deep.Probes {
				got[p.ID] = p
			}
			for id, want := range tc.verdicts {
				p, ok := got[id]
				if !ok || p.Status != want {
					t.Errorf("%s: %s (%s), want %s", id, p.Status, p.Message, want)
					continue
				}
				pb, _ := json.Marshal(p)
				for _, w := range tc.words[id] {
					if !strings.Contains(p.Message, w) && !strings.Contains(string(pb), w) {
						t.Errorf("%s: neither its message %q nor its details hold %q", id, p.Message, w)
					}
				}
			}
			if len(got) != len(tc.verdicts) {
				t.Errorf("%d probes in the report, %d pinned", len(got), len(tc.verdicts))
			}
			b, _ := json.Marshal(res)
			for _, tok := range site.issuedValues() {
				if strings.Contains(string(b), tok) {
					t.Errorf("the report holds the access token")
				}
			}
		})
	}
}

func (s *sdkSite) issuedValues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.tokens))
}
