package gather

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/engine/parse/wellknown"
	"github.com/agentready/agentready/internal/testing/loopback"
)

func TestParseChallenges(t *testing.T) {
	cases := []struct {
		in   []string
		want string // scheme{k=v,...}[t68] per challenge, "|" between
	}{
		{[]string{`Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="r w"`},
			`Bearer{resource_metadata=https://a.example/.well-known/oauth-protected-resource,scope=r w}`},
		// RFC 9110 §11.6.1's example: two challenges in one value, an escaped quote.
		{[]string{`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`},
			`Newauth{realm=apps,title=Login to "apps",type=1}|Basic{realm=simple}`},
		{[]string{`Basic dXNlcjpwYXNz==, Bearer error=invalid_token`}, `Basic{}[dXNlcjpwYXNz==]|Bearer{error=invalid_token}`},
		{[]string{`Basic realm="x"`, `bearer Realm = "y" ,RESOURCE_METADATA="u"`}, `Basic{realm=x}|bearer{realm=y,resource_metadata=u}`},
		{[]string{`Bearer`}, `Bearer{}`},
		{[]string{`Bearer realm="unterminated`}, `Bearer{realm=unterminated}`}, // kept, with a Problem noted
		{[]string{`=, ,,"x", Bearer a=1, a=2`}, `Bearer{a=1}`},                 // junk is a Problem, not a challenge; the first of a duplicate wins
		{[]string{``, `   `}, ``},
	}
	for _, c := range cases {
		var parts []string
		for _, ch := range ParseChallenges(c.in) {
			if ch.Scheme == "" {
				continue // what could not be read, kept only as a Problem
			}
			var kv []string
			for k, v := range ch.Params {
				kv = append(kv, k+"="+v)
			}
			sortStrings(kv)
			s := ch.Scheme + "{" + strings.Join(kv, ",") + "}"
			if ch.Token68 != "" {
				s += "[" + ch.Token68 + "]"
			}
			parts = append(parts, s)
		}
		if got := strings.Join(parts, "|"); got != c.want {
			t.Errorf("ParseChallenges(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	b, ok := Bearer(ParseChallenges([]string{`Basic realm="a", BEARER resource_metadata="m"`}))
	if !ok || b.Params["resource_metadata"] != "m" {
		t.Errorf("Bearer: %+v %v", b, ok)
	}
	if _, ok := Bearer(ParseChallenges([]string{`Basic realm="a"`})); ok {
		t.Error("Bearer found in a Basic-only header")
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// A header built to be expensive stays bounded (the commerce parser's caps:
// 32 challenges of 64 parameters).
func TestParseChallengesBounded(t *testing.T) {
	many := strings.Repeat("Bearer a=1, ", 5000)
	if n := len(ParseChallenges([]string{many, many})); n == 0 || n > 32 {
		t.Errorf("%d challenges kept, want 1 to 32", n)
	}
	var b strings.Builder
	b.WriteString("Bearer ")
	for i := range 1000 { // under the parser's 16 KiB header cap, over its parameter cap
		fmt.Fprintf(&b, "p%d=v, ", i)
	}
	cs := ParseChallenges([]string{b.String()})
	if len(cs) != 1 || len(cs[0].Params) == 0 || len(cs[0].Params) > 64 {
		t.Errorf("got %d challenges, %d params", len(cs), len(cs[0].Params))
	}
}

func TestMetadataURLsAndIssuerOf(t *testing.T) {
	cases := []struct {
		issuer string
		urls   []string
	}{
		{"https://a.example", []string{"https://a.example/.well-known/oauth-authorization-server", "https://a.example/.well-known/openid-configuration"}},
		{"https://a.example/", []string{"https://a.example/.well-known/oauth-authorization-server", "https://a.example/.well-known/openid-configuration"}},
		{"https://a.example/tenant1", []string{"https://a.example/.well-known/oauth-authorization-server/tenant1",
			"https://a.example/.well-known/openid-configuration/tenant1", "https://a.example/tenant1/.well-known/openid-configuration"}},
		{"https://a.example/t?x=1", nil},
		{"ftp://a.example", nil},
		{"not a url", nil},
	}
	for _, c := range cases {
		got := MetadataURLs(c.issuer)
		if strings.Join(got, " ") != strings.Join(c.urls, " ") {
			t.Errorf("MetadataURLs(%q) = %q, want %q", c.issuer, got, c.urls)
		}
		for _, u := range got {
			if back := IssuerOf(u); back != strings.TrimSuffix(c.issuer, "/") {
				t.Errorf("IssuerOf(%q) = %q, want %q", u, back, strings.TrimSuffix(c.issuer, "/"))
			}
		}
	}
	if got := IssuerOf("https://a.example/other"); got != "" {
		t.Errorf("IssuerOf of a non-metadata URL = %q", got)
	}
}

func TestParseTokenReply(t *testing.T) {
	r := ParseTokenReply([]byte(`{"access_token":"abc.def","token_type":"bearer","expires_in":60,"scope":"a b"}`))
	if !r.HasToken() || r.token != "abc.def" || r.TokenType != "bearer" || !r.HasExpires || r.ExpiresIn != 60 || r.Scope != "a b" {
		t.Errorf("reply %+v", r)
	}
	// A token that would break the Authorization header is not used; an
	// error that is prose, not a code, is not kept.
	r = ParseTokenReply([]byte(`{"access_token":"a b\r\nX-Evil: 1","error":"Please contact <b>admin</b>"}`))
	if r.HasToken() || r.Error != "" {
		t.Errorf("reply %+v", r)
	}
	if r := ParseTokenReply([]byte(`{"error":"invalid_client"}`)); r.Error != "invalid_client" || r.HasToken() {
		t.Errorf("reply %+v", r)
	}
	if ParseTokenReply([]byte(`<html>`)) != nil {
		t.Error("HTML parsed as a token reply")
	}
}

func TestScopeFor(t *testing.T) {
	prm := &wellknown.OAuthFields{Scopes: []string{"a:r", "b:w", "a:r", "bad scope", `q"`}}
	as1 := &wellknown.OAuthFields{Scopes: []string{"only"}}
	as2 := &wellknown.OAuthFields{Scopes: []string{"x", "y"}}
	if got := ScopeFor(prm, as1); got != "a:r b:w" {
		t.Errorf("PRM scopes: %q", got)
	}
	if got := ScopeFor(&wellknown.OAuthFields{}, as1); got != "only" {
		t.Errorf("the AS's only scope: %q", got)
	}
	if got := ScopeFor(nil, as2); got != "" {
		t.Errorf("several AS scopes: %q, want none", got)
	}
}

// oauthSite is a loopback site whose OAuth documents and API a test
// writes; it logs every request with the headers the probes must get right.
type oauthSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits []oauthHit
}

type oauthHit struct {
	Method, Path, Auth, Origin, ContentType, Body string
}

func newOAuthSite(t *testing.T, routes func(origin string) map[string]http.HandlerFunc) *oauthSite {
	s := &oauthSite{}
	var table map[string]http.HandlerFunc
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		s.mu.Lock()
		s.hits = append(s.hits, oauthHit{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Origin"), r.Header.Get("Content-Type"), string(body)})
		s.mu.Unlock()
		if h, ok := table[r.URL.Path]; ok {
			h(w, r)
			return
		}
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><title>t</title><h1>t</h1>")
			return
		}
		http.NotFound(w, r)
	}))
	table = routes(s.URL)
	t.Cleanup(s.Close)
	return s
}

func (s *oauthSite) hitsTo(paths ...string) []oauthHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []oauthHit
	for _, h := range s.hits {
		for _, p := range paths {
			if h.Path == p {
				out = append(out, h)
			}
		}
	}
	return out
}

func jsonDoc(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// noOAuth stands for a site without OAuth metadata (so the scan holds no
// token) in the plans that test one other deep gatherer.
var noOAuth = []*Gatherer{
	Define(OAuthMeta, "no OAuth metadata (tests)", nil, func(*Ctx) (*OAuthMetadata, error) { return &OAuthMetadata{}, nil }),
	Define(OAuthToken, "no token (tests)", []AnyKey{OAuthMeta}, func(*Ctx) (*OAuthTokenDoc, error) { return &OAuthTokenDoc{}, nil }),
}

// runOAuth runs the web plan plus the three OAuth gatherers (not every deep
// gatherer: the request counts below are this probe's alone).
func runOAuth(t *testing.T, site string, timeout time.Duration) (*Set, *fetch.Session) {
	t.Helper()
	target, _ := url.Parse(site + "/")
	client := fetch.NewClient(fetch.Config{Policy: loopback.Policy(), RequestTimeout: timeout})
	sess := client.NewSession()
	t.Cleanup(sess.Close)
	plan := MustPlan(append(WebPlan.Gatherers(), oauthMetaGatherer, oauthTokenGatherer, oauthChallengeGatherer)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set, err := plan.Run(ctx, sess, Site{Target: target, Origin: site, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatal(err)
	}
	return set, sess
}

// An issuer with a path, named by the PRM, is looked up where RFC 8414
// puts it; the token endpoint gets one request, the form POST with the
// PRM's scopes and no Origin (no GET beside it: some servers issue a token
// to any request); the token goes to the API once; a resource_metadata
// other than the root PRM is fetched and read.
func TestOAuthGatherersFollowDeclarations(t *testing.T) {
	s := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			WellKnownPRM:               jsonDoc(`{"resource":"` + o + `/api/data","authorization_servers":["` + o + `/tenant1"],"scopes_supported":["data:read"]}`),
			WellKnownPRM + "/api/data": jsonDoc(`{"resource":"` + o + `/api/data","authorization_servers":["` + o + `/tenant1"]}`),
			WellKnownAS + "/tenant1":   jsonDoc(`{"issuer":"` + o + `/tenant1","token_endpoint":"` + o + `/tenant1/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"]}`),
			WellKnownOIDC + "/tenant1": http.NotFound,
			"/tenant1" + WellKnownOIDC: http.NotFound,
			"/tenant1/token": func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				jsonDoc(`{"access_token":"tok-123","token_type":"Bearer","expires_in":60}`)(w, r)
			},
			"/api/data": func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer tok-123" {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o+WellKnownPRM+`/api/data"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				jsonDoc(`{"data":[]}`)(w, r)
			},
		}
	})
	set, _ := runOAuth(t, s.URL, 5*time.Second)
	m, tok, ch := Get(set, OAuthMeta), Get(set, OAuthToken), Get(set, OAuthChallengeKey)
	if !m.FromPRM || m.Issuer != s.URL+"/tenant1" || m.ASFields == nil || m.AS.RequestURL != s.URL+WellKnownAS+"/tenant1" {
		t.Fatalf("metadata %+v", m)
	}
	if !tok.Grant || !tok.Usable() || tok.Resp != ch.Token || tok.Reply != ch.Reply || !tok.IssuedBy(s.URL+"/tenant1/") {
		t.Errorf("token %+v, challenge's token %+v: not the one shared exchange", tok, ch.Token)
	}
	if !ch.Tried || ch.Target != s.URL+"/api/data" || ch.Scope != "data:read" || !ch.Reply.HasToken() {
		t.Fatalf("challenge %+v", ch)
	}
	if ch.Anon.Status != 401 || ch.Authed == nil || ch.Authed.Status != 200 || ch.MetadataFields == nil || ch.MetadataFields.Resource != s.URL+"/api/data" {
		t.Errorf("anon %d, authed %+v, metadata %+v", ch.Anon.Status, ch.Authed, ch.MetadataFields)
	}
	hits := s.hitsTo("/tenant1/token")
	for _, h := range hits {
		if h.Method != http.MethodPost || h.Body != "grant_type=client_credentials&scope=data%3Aread" || h.ContentType != "application/x-www-form-urlencoded" || h.Origin != "" || h.Auth != "" {
			t.Errorf("token request %+v", h)
		}
	}
	if len(hits) != 1 {
		t.Errorf("%d requests to the token endpoint, want 1 (the POST)", len(hits))
	}
	api := s.hitsTo("/api/data")
	withToken := 0
	for _, h := range api {
		if h.Auth == "Bearer tok-123" {
			withToken++
		}
	}
	if len(api) != 2 || withToken != 1 {
		t.Errorf("API requests %+v, want one without and one with the token", api)
	}
	// 3 metadata URLs (metadata), the POST (token), 2 API GETs + resource_metadata (challenge).
	mine := s.hitsTo(WellKnownAS+"/tenant1", WellKnownOIDC+"/tenant1", "/tenant1"+WellKnownOIDC, "/tenant1/token", "/api/data", WellKnownPRM+"/api/data")
	if len(mine) != 7 {
		t.Errorf("%d requests by the OAuth gatherers, want 7: %+v", len(mine), mine)
	}
	for _, h := range s.hitsTo("/", WellKnownPRM, WellKnownAS, WellKnownOIDC) {
		if h.Auth != "" || h.Method != http.MethodGet {
			t.Errorf("request %+v: only the API may get the token, only the token endpoint a POST", h)
		}
	}
}

// The token never follows a redirect (it would leave for wherever the
// site points), authorization servers on another site are not fetched,
// and nothing is POSTed when anonymous client credentials are not offered.
func TestOAuthGatherersRefuse(t *testing.T) {
	var otherHits sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Store(r.URL.Path+" "+r.Header.Get("Authorization"), true)
	}))
	defer other.Close()
	s := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			WellKnownPRM: jsonDoc(`{"resource":"` + o + `/api","authorization_servers":["https://login.elsewhere.example","` + o + `"]}`),
			WellKnownAS:  jsonDoc(`{"issuer":"` + o + `","token_endpoint":"` + o + `/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"]}`),
			"/token":     jsonDoc(`{"access_token":"tok","token_type":"Bearer"}`),
			"/api": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
			},
		}
	})
	set, sess := runOAuth(t, s.URL, 5*time.Second)
	m, ch := Get(set, OAuthMeta), Get(set, OAuthChallengeKey)
	if len(m.CrossSite) != 1 || m.Issuer != s.URL {
		t.Errorf("cross-site %q, issuer %q", m.CrossSite, m.Issuer)
	}
	for _, r := range sess.Records() {
		if strings.Contains(r.URL, "elsewhere.example") {
			t.Errorf("fetched %s on another site", r.URL)
		}
	}
	if ch.Authed == nil || ch.Authed.Status != http.StatusTemporaryRedirect {
		t.Errorf("authed %+v, want the 307 itself", ch.Authed)
	}
	otherHits.Range(func(k, _ any) bool { t.Errorf("the redirect target was requested: %v", k); return true })

	// Confidential clients only: no POST at all.
	conf := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			WellKnownAS: jsonDoc(`{"issuer":"` + o + `","token_endpoint":"` + o + `/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["client_secret_basic"]}`),
		}
	})
	set, _ = runOAuth(t, conf.URL, 5*time.Second)
	if Get(set, OAuthChallengeKey).Tried || Get(set, OAuthToken).Grant || Get(set, OAuthToken).Usable() {
		t.Error("tried without anonymous client credentials")
	}
	if hits := conf.hitsTo("/token"); len(hits) != 1 || hits[0].Method != http.MethodGet {
		t.Errorf("requests to a confidential-only token endpoint %+v, want one GET", hits)
	}
}

// Metadata whose issuer is not the one it was fetched for must not be used
// (RFC 8414 §3.3): neither probe sends anything to the token endpoint it
// names, however inviting its grants are, and neither touches the API.
func TestOAuthGatherersIgnoreRejectedMetadata(t *testing.T) {
	for name, issuer := range map[string]string{
		"another issuer": `"issuer":"https://login.elsewhere.example",`,
		"no issuer":      ``,
	} {
		t.Run(name, func(t *testing.T) {
			s := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
				return map[string]http.HandlerFunc{
					WellKnownPRM: jsonDoc(`{"resource":"` + o + `/api","authorization_servers":["` + o + `"]}`),
					WellKnownAS:  jsonDoc(`{` + issuer + `"token_endpoint":"` + o + `/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"]}`),
					"/token":     jsonDoc(`{"access_token":"tok","token_type":"Bearer"}`),
					"/api":       jsonDoc(`{}`),
				}
			})
			set, _ := runOAuth(t, s.URL, 5*time.Second)
			m, tok, ch := Get(set, OAuthMeta), Get(set, OAuthToken), Get(set, OAuthChallengeKey)
			if m.ASFields == nil || !m.Rejected() || m.ExpectedIssuer() != s.URL {
				t.Fatalf("metadata %+v not rejected (expected issuer %q)", m, m.ExpectedIssuer())
			}
			if tok.Resp != nil || tok.Issuer != "" || ch.Tried || ch.Token != nil {
				t.Errorf("token %+v, challenge %+v: rejected metadata was used", tok, ch)
			}
			if hits := s.hitsTo("/token", "/api"); len(hits) != 0 {
				t.Errorf("requests to what rejected metadata names: %+v", hits)
			}
		})
	}
}

// Without a PRM resource, the protected API tried is the first secured
// parameterless GET as engine/parse/openapi reads security: one whose
// authentication is optional (an empty requirement beside another) is not
// secured, so an operation the document's requirement covers is preferred.
func TestProtectedTargetReadsSecurityOnce(t *testing.T) {
	origin := "https://shop.example"
	target, _ := url.Parse(origin + "/")
	spec, err := openapi.Load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},
		"components":{"securitySchemes":{"oauth":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"/token","scopes":{}}}}}},
		"security":[{"oauth":[]}],
		"paths":{
			"/a-optional":{"get":{"security":[{},{"oauth":[]}],"responses":{"200":{"description":"ok"}}}},
			"/b-open":{"get":{"security":[],"responses":{"200":{"description":"ok"}}}},
			"/c-secured":{"get":{"responses":{"200":{"description":"ok"}}}}}}`), target)
	if err != nil {
		t.Fatal(err)
	}
	got, source, skip := protectedTarget(Site{Target: target, Origin: origin}, nil, &OpenAPIDoc{Spec: spec})
	if got != origin+"/c-secured" || skip != "" || !strings.Contains(source, "GET /c-secured") {
		t.Errorf("target %q (%s, %s), want the secured GET /c-secured", got, source, skip)
	}
}

// A token endpoint that hangs, and one that answers an endless body, end
// within the request timeout with nothing to use.
func TestOAuthGatherersHostileTokenEndpoint(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, token := range map[string]http.HandlerFunc{
		"hang": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		},
		"endless": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`)
			chunk := strings.Repeat("a", 32<<10)
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
				return map[string]http.HandlerFunc{
					WellKnownAS: jsonDoc(`{"issuer":"` + o + `","token_endpoint":"` + o + `/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"]}`),
					"/token":    token,
				}
			})
			start := time.Now()
			set, _ := runOAuth(t, s.URL, 700*time.Millisecond)
			ch := Get(set, OAuthChallengeKey)
			if ch.Reply.HasToken() || ch.Authed != nil {
				t.Errorf("a token was read from a hostile endpoint: %+v", ch)
			}
			if el := time.Since(start); el > 8*time.Second {
				t.Errorf("took %s", el)
			}
		})
	}
}

func FuzzOAuthParsers(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="a b"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		`Basic dXNlcg==, Bearer`, `"`, `a=`, `,=,=,`,
		`{"issuer":"https://a.example","token_endpoint":"https://a.example/t","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"],"scopes_supported":["x"],"authorization_servers":["https://a.example"]}`,
		`{"access_token":"t","token_type":"Bearer","expires_in":1e309,"error":"x"}`,
		`https://a.example/.well-known/oauth-authorization-server/t`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := ParseChallenges([]string{s, s})
		if len(cs) > 64 {
			t.Fatalf("%d challenges", len(cs))
		}
		for _, c := range cs {
			if (c.Scheme == "" && len(c.Problems) == 0) || len(c.Params) > 64 {
				t.Fatalf("challenge %+v", c)
			}
		}
		if fl, err := wellknown.ParseOAuthFields([]byte(s)); err == nil {
			if scope := ScopeFor(fl, fl); len(strings.Fields(scope)) > maxScopes {
				t.Fatalf("scope %q asks for more than %d scopes", scope, maxScopes)
			}
		}
		if r := ParseTokenReply([]byte(s)); r != nil && r.HasToken() && !oauthHeaderSafe(r.token) {
			t.Fatalf("unusable token kept: %q", r.token)
		}
		for _, u := range MetadataURLs(s) {
			if IssuerOf(u) == "" {
				t.Fatalf("IssuerOf(%q) is empty for a URL MetadataURLs built", u)
			}
		}
	})
}

// One authorization server spelt two ways is one server: scheme and host
// case, the default port and a terminating "/" do not make another; a port,
// a path or a host do.
func TestSameServer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://shop.example", "https://shop.example/", true},
		{"https://shop.example", "HTTPS://Shop.Example:443", true},
		{"http://127.0.0.1:8080/tenant1/", "http://127.0.0.1:8080/tenant1", true},
		{"https://shop.example/oauth/token", "https://shop.example:443/oauth/token#x", true},
		{"http://shop.example:80/token", "http://shop.example/token", true},
		{"https://[::1]:443/", "https://[::1]", true},
		{"https://shop.example", "https://shop.example:8443", false},
		{"https://shop.example", "http://shop.example", false},
		{"https://shop.example/tenant1", "https://shop.example/tenant2", false},
		{"https://shop.example/token", "https://login.shop.example/token", false},
		{"https://shop.example/token?a=1", "https://shop.example/token?a=2", false},
		{"", "", false},
		{"ftp://shop.example", "ftp://shop.example", false},
		{"https://user@shop.example", "https://user@shop.example", false},
	} {
		if got := SameServer(c.a, c.b); got != c.same {
			t.Errorf("SameServer(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
	tok := &OAuthTokenDoc{Issuer: "https://shop.example"}
	if !tok.IssuedBy("https://SHOP.example:443/") || tok.IssuedBy("https://idp.example") || (&OAuthTokenDoc{}).IssuedBy("") {
		t.Error("IssuedBy does not compare issuers the way SameServer does")
	}
}

// The MCP probe sends the scan's one token only to an endpoint that asked
// for one (401 with a Bearer challenge) and whose protected-resource
// metadata lists the token's issuer, however spelt; it never asks the
// token endpoint itself, and says why when it sends nothing.
func TestMCPAuthChoosesTheScansToken(t *testing.T) {
	reply := ParseTokenReply([]byte(`{"access_token":"tok-1","token_type":"Bearer"}`))
	tokResp := &fetch.Response{Status: 200}
	s := newOAuthSite(t, func(o string) map[string]http.HandlerFunc {
		return map[string]http.HandlerFunc{
			WellKnownPRM + "/mcp":   jsonDoc(`{"resource":"` + o + `/mcp","authorization_servers":["` + strings.ToUpper(o[:4]) + o[4:] + `/"]}`),
			WellKnownPRM + "/other": jsonDoc(`{"resource":"` + o + `/other","authorization_servers":["https://login.idp.example"]}`),
		}
	})
	target, _ := url.Parse(s.URL + "/")
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy()}).NewSession()
	t.Cleanup(sess.Close)
	c := &Ctx{Context: context.Background(), Site: Site{Target: target, Origin: s.URL}, sess: sess}
	rootPRM := &fetch.Response{RequestURL: s.URL + WellKnownPRM, Status: 200}
	meta := &OAuthMetadata{PRM: rootPRM, PRMFields: &wellknown.OAuthFields{AuthorizationServers: []string{s.URL}}}
	good := &OAuthTokenDoc{Issuer: s.URL, Endpoint: s.URL + "/token", Grant: true, Resp: tokResp, Reply: reply}
	challenge := func(v string) *fetch.Response {
		return &fetch.Response{Status: 401, Header: http.Header{"Www-Authenticate": {v}}}
	}
	for _, tc := range []struct {
		name      string
		tok       *OAuthTokenDoc
		challenge string
		send      bool
		note      string
	}{
		{"root metadata", good, `Bearer resource_metadata="` + s.URL + WellKnownPRM + `"`, true, ""},
		{"no resource_metadata: the root's", good, `Bearer realm="mcp"`, true, ""},
		{"metadata of its own, issuer spelt otherwise", good, `Bearer resource_metadata="` + s.URL + WellKnownPRM + `/mcp"`, true, ""},
		{"another authorization server", good, `Bearer resource_metadata="` + s.URL + WellKnownPRM + `/other"`, false, "does not list the authorization server"},
		{"metadata on another site", good, `Bearer resource_metadata="https://evil.example/prm"`, false, "on another site"},
		{"metadata that is not there", good, `Bearer resource_metadata="` + s.URL + WellKnownPRM + `/gone"`, false, "could not be read"},
		{"no Bearer challenge", good, `Basic realm="mcp"`, false, "without a Bearer challenge"},
		{"no anonymous client credentials", &OAuthTokenDoc{Issuer: s.URL, Endpoint: s.URL + "/token", Resp: &fetch.Response{Status: 405}}, `Bearer realm="mcp"`, false, "does not advertise anonymous client credentials"},
		{"token refused", &OAuthTokenDoc{Issuer: s.URL, Endpoint: s.URL + "/token", Grant: true, Resp: &fetch.Response{Status: 400}, Reply: ParseTokenReply([]byte(`{"error":"invalid_scope"}`))}, `Bearer realm="mcp"`, false, "gave no token"},
		{"no metadata", &OAuthTokenDoc{}, `Bearer realm="mcp"`, false, "no authorization-server metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &mcpAuth{meta: meta, tok: tc.tok}
			tr := &mcpSessionTransport{c: c, endpoint: s.URL + "/mcp", auth: a}
			if got := a.answer(tr, challenge(tc.challenge)); got != tc.send {
				t.Fatalf("answer = %v, want %v", got, tc.send)
			}
			req := fetch.Request{Header: map[string]string{}}
			if a.authorize(&req) != tc.send || (tc.send && (req.Header["Authorization"] != "Bearer tok-1" || !req.NoRedirect)) {
				t.Errorf("request %+v", req)
			}
			issuer, note := a.outcome()
			if tc.send != (issuer != "") || !strings.Contains(note, tc.note) || (tc.send && note != "") {
				t.Errorf("outcome %q, %q; want a note with %q", issuer, note, tc.note)
			}
			if strings.Contains(note, "tok-1") {
				t.Errorf("the note quotes the token: %q", note)
			}
		})
	}
	if hits := s.hitsTo("/token"); len(hits) != 0 {
		t.Errorf("the MCP probe asked the token endpoint itself: %+v", hits)
	}
}
