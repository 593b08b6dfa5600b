package wellknown

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestFrontMatter(t *testing.T) {
	fm, ok := FrontMatter([]byte("---\r\nname: s\r\ndescription: does things\r\n---\r\n# Body\n"))
	if !ok || fm["name"] != "s" || fm["description"] != "does things" {
		t.Errorf("%v %v", fm, ok)
	}
	for _, bad := range []string{"# no front matter", "---\nname: [unclosed\n---\n", "---\nname: s\n"} {
		if _, ok := FrontMatter([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestSkillsIndex(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	ix, err := ParseSkillsIndex([]byte(`{"$schema":"https://schemas.agentskills.io/discovery/0.2.0/schema.json","skills":[
	 {"name":"scan-site","type":"skill-md","description":"d","url":"/s.md","digest":"`+digest+`"},
	 {"name":"Bad Name","type":"zip","description":"","url":"","digest":"md5:x"}]}`), false)
	if err != nil || ix.Version != "0.2" || ix.Entries != 2 || ix.Valid != 1 || len(ix.Findings) != 1 {
		t.Fatalf("%+v %v", ix, err)
	}
	if !strings.Contains(ix.Findings[0], "name, type, description, url, digest") {
		t.Errorf("finding %q should name every bad member", ix.Findings[0])
	}
	ix, _ = ParseSkillsIndex([]byte(`{"skills":[{"id":"a","name":"A"}]}`), true)
	if ix.Version != "0.1" || ix.Valid != 1 {
		t.Errorf("v0.1: %+v", ix)
	}
}

func TestAuthMetadata(t *testing.T) {
	as, _ := ParseAuthServer([]byte(`{"issuer":"https://a.example/","token_endpoint":"https://a.example/token"}`), "https://a.example")
	if len(as.Problems) != 0 {
		t.Errorf("trailing slash on issuer: %v", as.Problems)
	}
	as, _ = ParseAuthServer([]byte(`{"issuer":"https://login.other.example"}`), "https://a.example")
	if len(as.Problems) != 2 {
		t.Errorf("issuer mismatch and no token endpoint: %v", as.Problems)
	}
	origin, _ := url.Parse("https://a.example/")
	pr, _ := ParseProtectedResource([]byte(`{"resource":"https://a.example/api","authorization_servers":["https://a.example"]}`), origin)
	if len(pr.Problems) != 0 {
		t.Errorf("a path on the origin is fine: %v", pr.Problems)
	}
	pr, _ = ParseProtectedResource([]byte(`{"resource":"https://b.example","authorization_servers":[]}`), origin)
	if len(pr.Problems) != 2 {
		t.Errorf("%v", pr.Problems)
	}
}

func TestParseOAuthFields(t *testing.T) {
	f, err := ParseOAuthFields([]byte(`{"issuer":"https://a.example","token_endpoint":7,"grant_types_supported":"client_credentials",
		"token_endpoint_auth_methods_supported":["none",3],"scopes_supported":null,"authorization_servers":["https://a.example"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Issuer != "https://a.example" || f.TokenEndpoint != "" || !f.HasGrantTypes || len(f.GrantTypes) != 0 ||
		len(f.AuthMethods) != 1 || f.Scopes != nil || len(f.AuthorizationServers) != 1 {
		t.Errorf("fields %+v", f)
	}
	want := []string{"token_endpoint is not a string", "grant_types_supported is not an array", "token_endpoint_auth_methods_supported holds something other than short strings"}
	if strings.Join(f.Problems, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", f.Problems, want)
	}
	if f.AnonymousClientCredentials() {
		t.Error("anonymous without client_credentials")
	}
	for _, bad := range []string{`[]`, `"x"`, `null`, `{`, ``} {
		_, err := ParseOAuthFields([]byte(bad))
		if err == nil {
			t.Errorf("%q parsed", bad)
		} else if !strings.HasPrefix(err.Error(), "not a JSON object: ") || strings.Contains(err.Error(), "json:") {
			t.Errorf("%q: error %q is not a plain sentence", bad, err)
		}
	}
	long := `{"scopes_supported":[` + strings.Repeat(`"s",`, 1000) + `"s"]}`
	if f, _ := ParseOAuthFields([]byte(long)); len(f.Scopes) != MaxOAuthList {
		t.Errorf("%d scopes kept", len(f.Scopes))
	}
	f, _ = ParseOAuthFields([]byte("\xef\xbb\xbf" + `{"grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["client_secret_basic","none"]}`))
	if !f.AnonymousClientCredentials() {
		t.Error("anonymous client credentials not recognised")
	}
}

// The free scan's graders read the document through ParseOAuthFields: a
// member of the wrong type is named as such (not "no issuer", and not a
// failure to read the rest), and they keep the reading for the deep scan.
func TestAuthGradersShareTheReading(t *testing.T) {
	as, err := ParseAuthServer([]byte("\xef\xbb\xbf"+`{"issuer":7,"token_endpoint":"https://a.example/token","grant_types_supported":["client_credentials"]}`), "https://a.example")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(as.Problems, "|") != "issuer is not a string" || as.Fields == nil || as.Fields.TokenEndpoint != as.TokenEndpoint || len(as.Fields.GrantTypes) != 1 {
		t.Errorf("auth server %+v (fields %+v)", as, as.Fields)
	}
	origin, _ := url.Parse("https://a.example/")
	pr, err := ParseProtectedResource([]byte(`{"resource":"https://a.example","authorization_servers":"https://a.example","scopes_supported":["r"]}`), origin)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pr.Problems, "|") != "authorization_servers is not an array|authorization_servers is missing or empty" || pr.Fields == nil || len(pr.Fields.Scopes) != 1 {
		t.Errorf("protected resource %+v", pr)
	}
	if _, err := ParseAuthServer([]byte(`{"issuer":"x",}`), "https://a.example"); err == nil || strings.Contains(err.Error(), "invalid character") {
		t.Errorf("error %v", err)
	}
}

func TestX402(t *testing.T) {
	v2 := `{"x402Version":2,"resource":{"url":"https://a/x"},"accepts":[{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"100000","asset":"EPjF","payTo":"W","maxTimeoutSeconds":60}]}`
	p := ParseX402(base64.StdEncoding.EncodeToString([]byte(v2)), nil)
	if !p.Valid() || p.Version != 2 || p.Source != "PAYMENT-REQUIRED header" {
		t.Errorf("v2 header: %+v", p)
	}
	v1 := `{"x402Version":1,"error":"pay","accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"100000","asset":"EPjF","payTo":"W","resource":"https://a/x","description":"d","maxTimeoutSeconds":60}]}`
	if p := ParseX402("not base64!", []byte(v1)); !p.Valid() || p.Version != 1 {
		t.Errorf("v1 body: %+v", p)
	}
	if p := ParseX402("", []byte(`{"x402Version":1,"accepts":[{"scheme":"exact","amount":"1"}]}`)); p.Valid() || len(p.Problems) != 1 || !strings.Contains(p.Problems[0], "maxAmountRequired") {
		t.Errorf("v1 uses maxAmountRequired: %+v", p)
	}
	if p := ParseX402("", []byte(`{"error":"payment required"}`)); p.Valid() {
		t.Error("a bare 402 body is not x402")
	}
}

func FuzzParsers(f *testing.F) {
	f.Add([]byte("---\nname: a\n---\n"), "")
	f.Add([]byte(`{"x402Version":2,"accepts":[{}]}`), "eyJ4NDAyVmVyc2lvbiI6Mn0=")
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		FrontMatter(body)
		ParseX402(header, body)
		ParseSkillsIndex(body, false)
		AISite(body)
		origin, _ := url.Parse("https://a.example/")
		ParseProtectedResource(body, origin)
		ParseAuthServer(body, "https://a.example")
		if f, err := ParseOAuthFields(body); err == nil {
			for _, l := range [][]string{f.GrantTypes, f.AuthMethods, f.Scopes, f.AuthorizationServers} {
				if len(l) > MaxOAuthList {
					t.Fatalf("list of %d kept", len(l))
				}
			}
			for _, s := range []string{f.Issuer, f.TokenEndpoint, f.Resource} {
				if len(s) > MaxOAuthString {
					t.Fatalf("string of %d bytes kept", len(s))
				}
			}
		}
	})
}
