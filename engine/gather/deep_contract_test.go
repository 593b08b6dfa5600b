package gather

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// declString is one declaration, compactly: kind url|header [scopes] !invalid ×crosssite.
func declString(d ContractDecl) string {
	s := strings.TrimSpace(string(d.Kind) + " " + d.URL + d.Header)
	if len(d.Scopes) > 0 {
		s += " [" + strings.Join(d.Scopes, ",") + "]"
	}
	if d.Invalid != "" {
		s += " !" + d.Invalid
	}
	if d.CrossSite {
		s += " ×"
	}
	return s
}

func TestParseContract(t *testing.T) {
	site, _ := url.Parse("https://shop.example/")
	base, _ := url.Parse("https://shop.example/.well-known/agent-card.json")
	cases := []struct {
		name, body string
		want       []string
	}{
		{"the peer's shape, resolved against the card", `{"capabilities":{"streaming":true,
			"intentEndpoints":["/api/send",{"url":"api/cancel","method":"POST"}],
			"sessions":{"endpoint":"https://api.shop.example/sessions"},
			"scopedTokens":{"tokenEndpoint":"/oauth/token","scopes":["a:read","", 3,"a:write"],"expirySeconds":900},
			"auditLog":{"header":"X-Request-Id"},
			"sandbox":{"baseUrl":"https://sandbox.evil.example/v1"},
			"toolSchemas":"/tools.json"}}`, []string{
			"intentEndpoints https://shop.example/api/send",
			"intentEndpoints https://shop.example/.well-known/api/cancel",
			"sessions https://api.shop.example/sessions",
			"scopedTokens https://shop.example/oauth/token [a:read,a:write]",
			"auditLog X-Request-Id",
			"sandbox https://sandbox.evil.example/v1 ×",
			"toolSchemas https://shop.example/tools.json",
		}},
		{"snake_case, extension params, space-separated scopes", `{"capabilities":{"tool_schemas":["/t1.json"],
			"extensions":[{"uri":"https://x.example/ext","params":{"open_api":"/openapi.yaml","scoped-tokens":{"token_endpoint":"/tok","scopes":"read write"}}},{"uri":"u","params":"no"}]}}`, []string{
			"toolSchemas https://shop.example/t1.json",
			"scopedTokens https://shop.example/tok [read,write]",
			"openapi https://shop.example/openapi.yaml",
		}},
		{"broken declarations are kept, with why", `{"capabilities":{"intentEndpoints":[],"sessions":42,"sandbox":{"mode":"test"},
			"auditLog":{"header":"X Bad"},"toolSchemas":"javascript:alert(1)","openapi":"https://user:pw@shop.example/o.json"}}`, []string{
			"intentEndpoints !is an empty list",
			"sessions !is neither a URL nor an object naming one",
			"auditLog !is not a valid HTTP header name",
			"sandbox !names no URL (give url, endpoint, or baseUrl)",
			"toolSchemas !is not an http(s) URL",
			"openapi !carries credentials in the URL",
		}},
		{"A2A's own capabilities declare nothing", `{"capabilities":{"streaming":true,"pushNotifications":false,"tools":{"listChanged":true},"extensions":[{"uri":"x","params":{"mode":"y"}}]}}`, nil},
		{"false and null declare nothing", `{"capabilities":{"sandbox":false,"sessions":null}}`, nil},
		{"capabilities not an object", `{"capabilities":["intentEndpoints"]}`, nil},
		{"not JSON", `<!doctype html><html>`, nil},
	}
	for _, c := range cases {
		var got []string
		for _, d := range ParseContract([]byte(c.body), base, site, "agent card") {
			got = append(got, declString(d))
			if !strings.HasPrefix(d.Source, "agent card ") {
				t.Errorf("%s: source %q", c.name, d.Source)
			}
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestCapContract(t *testing.T) {
	var decls []ContractDecl
	for i := 0; i < 8; i++ {
		decls = append(decls, ContractDecl{Kind: ContractIntent, URL: fmt.Sprintf("https://a.example/i%d", i)})
	}
	decls = append(decls, decls[0]) // a duplicate is not counted
	for i := 0; i < 10; i++ {
		decls = append(decls, ContractDecl{Kind: ContractTools, URL: fmt.Sprintf("https://a.example/t%d", i)})
	}
	kept, beyond := capContract(decls)
	intents := 0
	for _, d := range kept {
		if d.Kind == ContractIntent {
			intents++
		}
	}
	if len(kept) != MaxContractItems || intents != MaxContractIntents || beyond != 3+(10-(MaxContractItems-MaxContractIntents)) {
		t.Errorf("kept %d (%d intents), beyond %d", len(kept), intents, beyond)
	}
}

// CountTools counts every named entry as a declared tool and the valid
// ones by mcpcard.ReadToolDef, the rule the repository scan applies too: a
// description and an input schema of type object are required (a schema
// with properties but no type, which this count used to accept, is not an
// object schema).
func TestCountTools(t *testing.T) {
	const desc = `"description":"Finds orders by customer."`
	cases := []struct {
		body         string
		tools, valid int
		problem      string
	}{
		{`[{"name":"a",` + desc + `,"inputSchema":{"type":"object"}},{"name":"b"}]`, 2, 1, "b: no description"},
		{`[{"name":"b",` + desc + `}]`, 1, 0, "b: no input schema (inputSchema, input_schema or parameters)"},
		{`{"tools":[{"name":"a",` + desc + `,"input_schema":{"properties":{}}}]}`, 1, 0, "a: input schema is not an object schema"},
		{`{"tools":[{"name":"a",` + desc + `,"input_schema":{"type":"object","properties":{}}}]}`, 1, 1, ""},
		{`{"functions":[{"type":"function","function":{"name":"f",` + desc + `,"parameters":{"type":"object"}}}]}`, 1, 1, ""},
		{`[{"name":"g",` + desc + `,"parameters":{"type":"OBJECT"}}]`, 1, 1, ""},
		{`[{"type":"function","function":{"name":"f",` + desc + `,"parameters":{"type":"string"}}}]`, 1, 0, "f: input schema is not an object schema"},
		{`[{"name":"has space",` + desc + `,"inputSchema":{"type":"object"}}]`, 1, 0, "has space: name missing or not a valid tool name"},
		{`[{"name":"` + strings.Repeat("m", 100) + `",` + desc + `,"inputSchema":{"type":"object"}}]`, 1, 1, ""}, // MCP allows 128
		{`[{"name":"a",` + desc + `,"inputSchema":{"type":"object"}}]`, 1, 1, ""},
		{`[{"description":"no name"}, "x", 3]`, 0, 0, ""},
		{`{"skills":[{"name":"s"}]}`, 0, 0, ""},
		{`"tools"`, 0, 0, ""},
	}
	for _, c := range cases {
		if n, v, p := CountTools([]byte(c.body)); n != c.tools || v != c.valid || p != c.problem {
			t.Errorf("%s: %d tools, %d valid, %q; want %d, %d, %q", c.body, n, v, p, c.tools, c.valid, c.problem)
		}
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < 2*maxContractTools; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"t","description":"d","inputSchema":{"type":"object"}}`)
	}
	b.WriteString("]")
	if n, v, _ := CountTools([]byte(b.String())); n != maxContractTools || v != n {
		t.Errorf("%d tools counted, want the cap %d", n, maxContractTools)
	}
}

func FuzzParseContract(f *testing.F) {
	f.Add([]byte(`{"capabilities":{"intentEndpoints":["/a",{"url":"https://b.example/x"}],"auditLog":"X-Id","scopedTokens":{"tokenEndpoint":"/t","scopes":["a"]}}}`))
	f.Add([]byte(`{"capabilities":{"extensions":[{"uri":"u","params":{"toolSchemas":"//evil.example/t"}}]}}`))
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	site, _ := url.Parse("https://shop.example/")
	base, _ := url.Parse("https://shop.example/.well-known/agent-card.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		decls := ParseContract(body, base, site, "card")
		for _, d := range decls {
			if d.URL != "" && !d.CrossSite && !weburl.SameSite(site, d.URL) {
				t.Fatalf("cross-site URL %q not marked", d.URL)
			}
			if d.URL != "" && d.Invalid != "" {
				t.Fatalf("invalid declaration with a URL: %+v", d)
			}
			if len(d.Declared) > maxDeclaredLen+len("…") || len(d.Scopes) > maxContractScopes {
				t.Fatalf("unbounded declaration %+v", d)
			}
		}
		kept, _ := capContract(decls)
		if len(kept) > MaxContractItems {
			t.Fatalf("%d items kept", len(kept))
		}
		if n, v, p := CountTools(body); v > n || n > maxContractTools || (p == "") != (v == n) {
			t.Fatalf("CountTools %d, %d, %q", n, v, p)
		}
	})
}

func runContract(t *testing.T, siteURL string) (*ContractDoc, *fetch.Session) {
	t.Helper()
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy(), RequestTimeout: 2 * time.Second}).NewSession()
	t.Cleanup(sess.Close)
	target, _ := url.Parse(siteURL + "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := MustPlan(append([]*Gatherer{homeGatherer, agentCardGatherer, aiSiteGatherer, contractGatherer}, noOAuth...)...).Run(ctx, sess, Site{Target: target, Origin: siteURL, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatal(err)
	}
	return Get(set, Contract), sess
}

// Cross-site declarations are listed and never requested; every same-site
// one is asked once, with GET, in one round after the card.
func TestContractGathererRefusesCrossSite(t *testing.T) {
	site, err := fixture.Start(filepath.Join("..", "..", "testdata", "deep", "contract-broken"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	doc, sess := runContract(t, site.URL)
	cross, asked := 0, 0
	for _, it := range doc.Items {
		if it.CrossSite {
			cross++
			if it.Resp != nil {
				t.Errorf("%s was requested", it.URL)
			}
		}
		if it.Resp != nil {
			asked++
		}
	}
	if len(doc.Items) != 8 || cross != 3 || asked != 4 {
		t.Fatalf("%d items, %d cross-site, %d requested", len(doc.Items), cross, asked)
	}
	host := strings.TrimPrefix(site.URL, "http://")
	contract := 0
	for _, r := range sess.Records() {
		u, _ := url.Parse(r.URL)
		if u.Host != host {
			t.Errorf("request off the site: %s", r.URL)
		}
		if r.Method != "GET" {
			t.Errorf("%s %s: only GET is allowed", r.Method, r.URL)
		}
		if r.Round == 2 && u.Path != "/.well-known/agent.json" {
			contract++
		}
	}
	if contract != 4 {
		t.Errorf("%d contract requests in round 2, want 4", contract)
	}
	for _, it := range doc.Items {
		switch it.URL {
		case site.URL + "/api/sessions":
			if !it.SameAsHome {
				t.Error("the soft 404 was not recognised as the homepage")
			}
		case site.URL + "/tools-bomb.json":
			if it.Resp.Complete() || it.JSON || it.Tools != 0 {
				t.Errorf("the gzip bomb was judged: complete %v json %v", it.Resp.Complete(), it.JSON)
			}
		}
	}
}

func TestContractGathererReadsDocuments(t *testing.T) {
	site, err := fixture.Start(filepath.Join("..", "..", "testdata", "deep", "contract-good"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	doc, _ := runContract(t, site.URL)
	if len(doc.Items) != 8 || len(doc.Sources) != 1 {
		t.Fatalf("%d items from %v", len(doc.Items), doc.Sources)
	}
	for _, it := range doc.Items {
		switch it.Kind {
		case ContractTools:
			if it.Tools != 2 || it.ToolsValid != 2 || it.ToolProblem != "" {
				t.Errorf("tools %d/%d (%s)", it.ToolsValid, it.Tools, it.ToolProblem)
			}
		case ContractOpenAPI:
			if it.Spec == nil || len(it.Spec.Operations) != 2 || !strings.Contains(it.Source, "extension https://agentready.dev/ext/openapi") {
				t.Errorf("openapi %+v from %q", it.Spec, it.Source)
			}
		}
	}
}
