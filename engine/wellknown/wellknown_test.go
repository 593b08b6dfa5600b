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
	})
}
