package checks

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/engine/report"
)

const contractSite = "https://shop.example"

func judgeContract(t *testing.T, doc *gather.ContractDoc, home *fetch.Response) report.DeepProbe {
	t.Helper()
	target, _ := url.Parse(contractSite + "/")
	set := gather.NewSet(gather.Site{Target: target, Origin: contractSite})
	gather.Put(set, gather.Contract, doc)
	if home == nil {
		home = &fetch.Response{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<!doctype html><h1>Shop</h1>")}
	}
	gather.Put(set, gather.Home, &gather.HomePage{Resp: home})
	for _, p := range Deep() {
		if p.ID == "level5.contract" {
			return p.Judge(set)
		}
	}
	t.Fatal("level5.contract is not registered")
	return report.DeepProbe{}
}

func contractAnswer(status int, ct, body string, hdr ...string) *fetch.Response {
	h := http.Header{}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	return &fetch.Response{Status: status, Header: h, Body: []byte(body), FinalURL: contractSite + "/x"}
}

func contractItem(kind gather.ContractKind, r *fetch.Response, mod ...func(*gather.ContractItem)) *gather.ContractItem {
	it := &gather.ContractItem{ContractDecl: gather.ContractDecl{Kind: kind, Source: "agent card capabilities." + string(kind), URL: contractSite + "/x"}, Resp: r}
	if r != nil && r.Err == nil {
		b := strings.TrimSpace(string(r.Body))
		it.JSON = strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[")
	}
	if kind == gather.ContractTokens {
		it.Scopes = []string{"read"}
	}
	for _, m := range mod {
		m(it)
	}
	return it
}

// Each declaration verifies only when it answers as what it claims to be:
// a 200 is not enough.
func TestContractVerdicts(t *testing.T) {
	jsonErr := `{"error":"invalid_request"}`
	cases := []struct {
		name     string
		it       *gather.ContractItem
		verified bool
		reason   string
	}{
		{"intent 405 with Allow", contractItem(gather.ContractIntent, contractAnswer(405, "", "", "Allow", "POST")), true, "answers 405 allowing POST"},
		{"intent 405 without Allow or JSON", contractItem(gather.ContractIntent, contractAnswer(405, "text/plain", "no")), false, "answers 405 with text/plain, not an API response"},
		{"intent 200 text (the peer's llms.txt)", contractItem(gather.ContractIntent, contractAnswer(200, "text/plain", "# Site\n")), false, "not an API response"},
		{"intent 404 JSON", contractItem(gather.ContractIntent, contractAnswer(404, "application/problem+json", `{"status":404}`)), false, "answers 404"},
		{"intent 500", contractItem(gather.ContractIntent, contractAnswer(503, "application/json", jsonErr)), false, "answers 503"},
		{"intent 429", contractItem(gather.ContractIntent, contractAnswer(429, "application/json", jsonErr)), false, "rate limited"},
		{"intent HTML", contractItem(gather.ContractIntent, contractAnswer(200, "text/html", "<!doctype html><p>hi")), false, "answers 200 with an HTML page"},
		{"intent soft 404", contractItem(gather.ContractIntent, contractAnswer(200, "text/html", "<!doctype html>"), func(i *gather.ContractItem) { i.SameAsHome = true }), false, "with the homepage (a soft 404)"},
		{"session 401 challenge", contractItem(gather.ContractSession, contractAnswer(401, "", "", "WWW-Authenticate", `Bearer realm="x"`)), true, "authentication challenge"},
		{"session 401 bare", contractItem(gather.ContractSession, contractAnswer(401, "", "")), false, "answers 401 with no Content-Type"},
		{"session JSON mistyped", contractItem(gather.ContractSession, contractAnswer(200, "text/plain", `{"ok":true}`)), false, "JSON typed text/plain"},
		{"token 400 JSON", contractItem(gather.ContractTokens, contractAnswer(400, "application/json", jsonErr)), true, "answers 400 with JSON"},
		{"token without scopes", contractItem(gather.ContractTokens, contractAnswer(400, "application/json", jsonErr), func(i *gather.ContractItem) { i.Scopes = nil }), false, "without scopes"},
		{"sandbox 404 JSON", contractItem(gather.ContractSandbox, contractAnswer(404, "application/json", `{"error":"no route"}`)), true, "answers 404 with JSON"},
		{"transport error", contractItem(gather.ContractSandbox, &fetch.Response{Err: context.DeadlineExceeded}), false, "did not answer ("},
		{"redirected off-site", contractItem(gather.ContractSandbox, func() *fetch.Response {
			r := contractAnswer(200, "application/json", "{}")
			r.FinalURL = "https://elsewhere.example/v1"
			return r
		}()), false, "redirects to another domain (elsewhere.example)"},
		{"cut body", contractItem(gather.ContractTools, func() *fetch.Response {
			r := contractAnswer(200, "application/json", "[")
			r.Cut = "it is larger than the 2 MiB the scanner reads"
			return r
		}()), false, "body was cut (it is larger"},
		{"tools good", contractItem(gather.ContractTools, contractAnswer(200, "application/json", "[]"), func(i *gather.ContractItem) { i.Tools, i.ToolsValid = 3, 3 }), true, "3 tools, each a valid definition"},
		{"tools not valid", contractItem(gather.ContractTools, contractAnswer(200, "application/json", "[]"), func(i *gather.ContractItem) {
			i.Tools, i.ToolsValid, i.ToolProblem = 3, 1, "refund: no description"
		}), false, "lists 3 tools, 2 of them not a valid tool definition (first: refund: no description)"},
		{"tools none", contractItem(gather.ContractTools, contractAnswer(200, "application/json", `{"skills":[]}`)), false, "without tool objects"},
		{"tools not JSON", contractItem(gather.ContractTools, contractAnswer(200, "text/plain", "tools: a, b")), false, "answers text/plain that is not JSON"},
		{"tools wrong type", contractItem(gather.ContractTools, contractAnswer(200, "text/plain", "[]"), func(i *gather.ContractItem) { i.Tools, i.ToolsValid = 1, 1 }), false, "serve it as application/json"},
		{"tools 404", contractItem(gather.ContractTools, contractAnswer(404, "application/json", "{}")), false, "answers 404"},
		{"openapi good", contractItem(gather.ContractOpenAPI, contractAnswer(200, "application/yaml", "openapi: 3.1.0"), func(i *gather.ContractItem) {
			i.Spec = &openapi.Spec{Version: "3.1.0", Operations: make([]openapi.Operation, 2)}
		}), true, "OpenAPI 3.1.0 with 2 operations"},
		{"openapi other JSON", contractItem(gather.ContractOpenAPI, contractAnswer(200, "application/json", "{}"), func(i *gather.ContractItem) { i.NotOpenAPI = true }), false, "is not an OpenAPI document"},
		{"openapi broken", contractItem(gather.ContractOpenAPI, contractAnswer(200, "application/json", `{"openapi":"3.1.0"`)), false, "does not load as OpenAPI"},
	}
	for _, c := range cases {
		p := judgeContract(t, &gather.ContractDoc{Sources: []string{contractSite + "/.well-known/agent-card.json"}, Items: []*gather.ContractItem{c.it}}, nil)
		res := p.Details["items"].([]contractResult)[0]
		want := map[bool]report.Status{true: report.Pass, false: report.Fail}[c.verified]
		if p.Status != want || !strings.Contains(res.Reason, c.reason) {
			t.Errorf("%s: %s, reason %q; want %s with %q", c.name, p.Status, res.Reason, want, c.reason)
		}
		if strings.Contains(p.Message, "context deadline") {
			t.Errorf("%s: a library's error text reached the message: %q", c.name, p.Message)
		}
	}
}

// The audit header is looked for on the site's own answers; cross-site
// and malformed declarations count against the contract and are named.
func TestContractAuditRefusedAndMixed(t *testing.T) {
	audit := &gather.ContractItem{ContractDecl: gather.ContractDecl{Kind: gather.ContractAudit, Source: "ai.json capabilities.auditLog", Header: "X-Request-Id"}}
	withHeader := contractAnswer(405, "", "", "Allow", "POST", "X-Request-Id", "r1")
	doc := &gather.ContractDoc{Sources: []string{contractSite + "/.well-known/ai.json"}, Items: []*gather.ContractItem{
		contractItem(gather.ContractIntent, withHeader),
		audit,
		{ContractDecl: gather.ContractDecl{Kind: gather.ContractSandbox, URL: "https://sandbox.evil.example/", CrossSite: true}},
		{ContractDecl: gather.ContractDecl{Kind: gather.ContractSession, Source: "ai.json capabilities.sessions", Invalid: "is neither a URL nor an object naming one"}},
	}, Beyond: 2}
	p := judgeContract(t, doc, nil)
	items := p.Details["items"].([]contractResult)
	if p.Status != report.Partial || items[1].Result != "verified" || items[1].Reason != "is sent by "+contractSite+"/x" {
		t.Errorf("%s, audit %+v", p.Status, items[1])
	}
	for _, w := range []string{"2 of 4 declared contract items verify (declared in https://shop.example/.well-known/ai.json)",
		"sessions endpoint (ai.json capabilities.sessions): the declaration is neither a URL nor an object naming one",
		"Refused, not followed: 1 declaration on another registrable domain (sandbox https://sandbox.evil.example/)",
		"2 declarations beyond the first 12"} {
		if !strings.Contains(p.Message, w) {
			t.Errorf("message lacks %q: %q", w, p.Message)
		}
	}
	if items[2].Result != "refused" || items[3].Result != "invalid" {
		t.Errorf("results %+v", items)
	}
	// Only the header's absence everywhere fails it.
	doc.Items = []*gather.ContractItem{audit, contractItem(gather.ContractIntent, contractAnswer(405, "", "", "Allow", "POST"))}
	p = judgeContract(t, doc, nil)
	if p.Status != report.Partial || !strings.Contains(p.Message, "audit header X-Request-Id is missing from all 2 answers read") || !strings.Contains(p.Message, "Send the declared audit header on every response") {
		t.Errorf("%s %q", p.Status, p.Message)
	}
	home := contractAnswer(200, "text/html", "<!doctype html>", "x-request-id", "h")
	if p = judgeContract(t, doc, home); p.Status != report.Pass {
		t.Errorf("header on the homepage: %s %q", p.Status, p.Message)
	}
}

func TestContractNothingDeclared(t *testing.T) {
	p := judgeContract(t, &gather.ContractDoc{}, nil)
	if p.Status != report.NA || !strings.Contains(p.Message, "nothing to verify") {
		t.Errorf("%s %q", p.Status, p.Message)
	}
}
