package checks

import (
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

func TestA2AInterfacesVerdicts(t *testing.T) {
	const rpc1, rpc2, rest = "https://example.com/a2a", "https://example.com/a2a/v03", "https://example.com/a2a/rest"
	jsonrpc := func(u string, resp *fetch.Response, reply *gather.A2AReply) gather.A2AInterfaceTry {
		return gather.A2AInterfaceTry{URL: u, Binding: gather.A2AJSONRPC, Version: "1.0", Method: gather.A2AMethodV1, Resp: resp, Reply: reply}
	}
	http := func(u string, resp *fetch.Response) gather.A2AInterfaceTry {
		return gather.A2AInterfaceTry{URL: u, Binding: gather.A2AHTTPJSON, Version: "1.0", Resp: resp}
	}
	html := &fetch.Response{RequestURL: rpc2, FinalURL: rpc2, Status: 200, Body: []byte("<!doctype html><html><body>app</body></html>")}
	cases := []struct {
		name   string
		doc    *gather.A2AInterfacesDoc
		status report.Status
		says   []string
	}{
		{"no card", nil, report.NA, []string{"No A2A agent card"}},
		{"unreadable card", &gather.A2AInterfacesDoc{CardURL: "https://example.com/.well-known/agent-card.json", Unreadable: true}, report.NA, []string{"not a JSON object"}},
		{"no interface", &gather.A2AInterfacesDoc{CardURL: "https://example.com/.well-known/agent-card.json"}, report.NA, []string{"declares no interface"}},
		{"only elsewhere and gRPC", &gather.A2AInterfacesDoc{Declared: 2, CrossSite: []string{"https://agents.other.example/"}, GRPC: []string{"https://example.com/grpc"}},
			report.NA, []string{"none that this probe calls", "agents.other.example", "gRPC interfaces are not called"}},
		{"a result and a JSON-RPC error", &gather.A2AInterfacesDoc{Declared: 2, Tried: []gather.A2AInterfaceTry{
			jsonrpc(rpc1, apiResp(rpc1, 200), &gather.A2AReply{Result: true, ResultName: "Helper"}),
			jsonrpc(rpc2, apiResp(rpc2, 200), &gather.A2AReply{Code: -32007, Message: "not configured"})}},
			report.Pass, []string{`extended card ("Helper")`, "-32007 (extended card not configured)"}},
		{"JSON-RPC and a reachable HTTP+JSON interface", &gather.A2AInterfacesDoc{Declared: 2, Tried: []gather.A2AInterfaceTry{
			jsonrpc(rpc1, apiResp(rpc1, 200), &gather.A2AReply{Result: true}), http(rest, apiResp(rest, 404))}},
			report.Partial, []string{"answers JSON-RPC", "(HTTP+JSON) answered GET with 404", "an HTTP answer alone"}},
		{"one live, one an HTML page", &gather.A2AInterfacesDoc{Declared: 2, Tried: []gather.A2AInterfaceTry{
			jsonrpc(rpc1, apiResp(rpc1, 200), &gather.A2AReply{Result: true}), jsonrpc(rpc2, html, nil)}},
			report.Partial, []string{"broken: " + rpc2 + " answered 200 with an HTML page", "Serve the A2A endpoint"}},
		{"credentials first", &gather.A2AInterfacesDoc{Declared: 1, Tried: []gather.A2AInterfaceTry{jsonrpc(rpc1, apiResp(rpc1, 401), nil)}},
			report.Partial, []string{"asks for credentials (HTTP 401)"}},
		{"called with the scan's token", &gather.A2AInterfacesDoc{Declared: 1, AuthScheme: "oauth", AuthIssuer: "https://example.com", Tried: []gather.A2AInterfaceTry{
			func() gather.A2AInterfaceTry {
				t := jsonrpc(rpc1, apiResp(rpc1, 200), &gather.A2AReply{Result: true, ResultName: "Helper"})
				t.Authorized = true
				return t
			}()}},
			report.Pass, []string{`extended card ("Helper")`, `called with the deep scan's OAuth token, from the authorization server https://example.com that the card's security scheme "oauth" names`}},
		{"the scan's token refused", &gather.A2AInterfacesDoc{Declared: 1, AuthScheme: "oauth", AuthIssuer: "https://example.com", Tried: []gather.A2AInterfaceTry{
			func() gather.A2AInterfaceTry {
				t := jsonrpc(rpc1, apiResp(rpc1, 403), nil)
				t.Authorized = true
				return t
			}()}},
			report.Partial, []string{"refused the token its card's security scheme leads to (HTTP 403)"}},
		{"only HTTP+JSON, reachable", &gather.A2AInterfacesDoc{Declared: 1, Tried: []gather.A2AInterfaceTry{http(rest, apiResp(rest, 200))}},
			report.Partial, []string{"without a JSON-RPC response to show"}},
		{"only HTTP+JSON, down", &gather.A2AInterfacesDoc{Declared: 1, Tried: []gather.A2AInterfaceTry{http(rest, apiResp(rest, 503))}},
			report.Fail, []string{"No interface", "answered GET with 503"}},
		{"a redirect and a refusal", &gather.A2AInterfacesDoc{Declared: 2, Tried: []gather.A2AInterfaceTry{
			jsonrpc(rpc1, apiResp(rpc1, 308, "Location", "https://example.com/a2a/"), nil), jsonrpc(rpc2, apiRefused(rpc2), nil)}},
			report.Fail, []string{"none gave a JSON-RPC answer", "redirect (308)", rpc2 + " could not be reached"}},
	}
	for _, c := range cases {
		set := gather.NewSet(apiSite("https://example.com/"))
		gather.Put(set, gather.AgentInterfaces, c.doc)
		got := deepProbeByID(t, "a2a.interfaces").Judge(set)
		if got.Status != c.status {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Status, got.Message, c.status)
		}
		for _, w := range c.says {
			if !strings.Contains(got.Message, w) {
				t.Errorf("%s: %q lacks %q", c.name, got.Message, w)
			}
		}
		if strings.Contains(got.Message, "dial tcp") || strings.Contains(got.Message, "10.1.2.3") {
			t.Errorf("%s: %q leaks the transport error", c.name, got.Message)
		}
	}
}
