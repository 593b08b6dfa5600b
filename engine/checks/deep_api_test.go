package checks

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

func deepProbeByID(t *testing.T, id string) *DeepProbe {
	t.Helper()
	for _, p := range Deep() {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no deep probe %s", id)
	return nil
}

func apiSite(raw string) gather.Site {
	u, _ := url.Parse(raw)
	return gather.Site{Target: u, Origin: u.Scheme + "://" + u.Host}
}

// apiResp is an answer as the fetcher would have returned it.
func apiResp(u string, status int, header ...string) *fetch.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &fetch.Response{RequestURL: u, FinalURL: u, Status: status, Header: h}
}

// apiRefused is a refused connection as the transport reports it, naming
// an address of our own network that must not reach a report.
func apiRefused(u string) *fetch.Response {
	addr := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443}
	return &fetch.Response{RequestURL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
}

func judgeServers(t *testing.T, site string, doc *gather.APIServersDoc) report.DeepProbe {
	set := gather.NewSet(apiSite(site))
	gather.Put(set, gather.APIServers, doc)
	return deepProbeByID(t, "api.servers").Judge(set)
}

func TestAPIServersVerdicts(t *testing.T) {
	const s1, s2 = "https://api.example.com/v1", "https://example.com/api"
	cors := []string{"Access-Control-Allow-Origin", "*"}
	try := func(u string, get, pf *fetch.Response) gather.APIServerTry {
		return gather.APIServerTry{URL: u, Get: get, Preflight: pf}
	}
	cases := []struct {
		name   string
		site   string
		doc    *gather.APIServersDoc
		status report.Status
		says   []string
	}{
		{"no description", "https://example.com/", nil, report.NA, []string{"No OpenAPI description"}},
		{"no servers", "https://example.com/", &gather.APIServersDoc{SpecURL: "https://example.com/openapi.json"}, report.NA, []string{"declares no servers", "`servers`"}},
		{"only other domains", "https://example.com/", &gather.APIServersDoc{SpecURL: "https://example.com/openapi.json", Declared: 1, CrossSite: []string{"https://api.other.example/"}},
			report.NA, []string{"none that can be requested", "another domain", "api.other.example"}},
		{"all reachable with CORS over HTTPS", "https://example.com/", &gather.APIServersDoc{Declared: 2, Tried: []gather.APIServerTry{
			try(s1, apiResp(s1, 404), apiResp(s1, 204, cors...)),
			try(s2, apiResp(s2, 200), apiResp(s2, 200, "Access-Control-Allow-Origin", gather.APIPreflightOrigin))}},
			report.Pass, []string{"All 2 API servers", "over HTTPS", "allow browser agents"}},
		{"preflight allows another origin", "https://example.com/", &gather.APIServersDoc{Declared: 1, Tried: []gather.APIServerTry{
			try(s1, apiResp(s1, 200), apiResp(s1, 200, "Access-Control-Allow-Origin", "https://app.example.com"))}},
			report.Partial, []string{"allows another origin", "OPTIONS preflights"}},
		{"preflight refused with 405 but ACAO", "https://example.com/", &gather.APIServersDoc{Declared: 1, Tried: []gather.APIServerTry{
			try(s1, apiResp(s1, 200), apiResp(s1, 405, cors...))}},
			report.Partial, []string{"answered the CORS preflight with 405"}},
		{"plain HTTP on an HTTPS site", "https://example.com/", &gather.APIServersDoc{Declared: 1, Tried: []gather.APIServerTry{
			try("http://example.com/api", apiResp("http://example.com/api", 200), apiResp("http://example.com/api", 200, cors...))}},
			report.Partial, []string{"plain HTTP", "https://"}},
		{"plain HTTP that redirects to HTTPS", "https://example.com/", &gather.APIServersDoc{Declared: 1, Tried: []gather.APIServerTry{
			try("http://example.com/api", &fetch.Response{RequestURL: "http://example.com/api", FinalURL: s2, Status: 200, Header: http.Header{}}, apiResp("http://example.com/api", 200, cors...))}},
			report.Pass, []string{"The API server http://example.com/api answers over HTTPS"}},
		{"one of two down", "https://example.com/", &gather.APIServersDoc{Declared: 2, Tried: []gather.APIServerTry{
			try(s1, apiRefused(s1), apiRefused(s1)),
			try(s2, apiResp(s2, 200), apiResp(s2, 200, cors...))}},
			report.Partial, []string{"1 of 2", s1 + " could not be reached", "refused"}},
		{"all down", "https://example.com/", &gather.APIServersDoc{Declared: 2, Beyond: 1, Tried: []gather.APIServerTry{
			try(s1, apiRefused(s1), apiRefused(s1)),
			try(s2, apiResp(s2, 502), apiResp(s2, 502))}},
			report.Fail, []string{"No API server", s2 + " answered 502", "1 more same-site servers were not tried"}},
	}
	for _, c := range cases {
		got := judgeServers(t, c.site, c.doc)
		if got.Status != c.status {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Status, got.Message, c.status)
		}
		for _, w := range c.says {
			if !strings.Contains(got.Message, w) {
				t.Errorf("%s: %q lacks %q", c.name, got.Message, w)
			}
		}
		// Our own network and a library's words never reach the report.
		if strings.Contains(got.Message, "10.1.2.3") || strings.Contains(got.Message, "dial tcp") {
			t.Errorf("%s: %q leaks the transport error", c.name, got.Message)
		}
	}
}

func judgeErrors(t *testing.T, doc *gather.APIErrorsDoc) report.DeepProbe {
	set := gather.NewSet(apiSite("https://example.com/"))
	gather.Put(set, gather.APIErrors, doc)
	return deepProbeByID(t, "api.errors").Judge(set)
}

func TestAPIErrorsVerdicts(t *testing.T) {
	const u = "https://example.com/api/items/" + gather.APINonexistent
	problemJSON := map[string][]string{"404": {"application/problem+json"}}
	try := func(codes []string, types map[string][]string, resp *fetch.Response, parses bool) gather.APIErrorTry {
		return gather.APIErrorTry{Path: "/items/{id}", URL: u, Expect: gather.APIExpectMissing, Codes: codes, Types: types, Resp: resp, JSONParses: parses}
	}
	cases := []struct {
		name   string
		doc    *gather.APIErrorsDoc
		status report.Status
		says   []string
	}{
		{"no description", nil, report.NA, []string{"No OpenAPI description"}},
		{"servers elsewhere", &gather.APIErrorsDoc{OffSite: true, SpecURL: "https://example.com/openapi.json"}, report.NA, []string{"site's own domain"}},
		{"nothing to provoke", &gather.APIErrorsDoc{SpecURL: "https://example.com/openapi.json"}, report.NA, []string{"documents a 4xx", "Document the errors"}},
		{"JSON family and ranges match", &gather.APIErrorsDoc{Candidates: 7, Tries: []gather.APIErrorTry{
			try([]string{"404"}, problemJSON, apiResp(u, 404, "Content-Type", "application/json; charset=utf-8"), true),
			try([]string{"4XX"}, map[string][]string{"4XX": {"application/*"}}, apiResp(u, 410, "Content-Type", "application/xml"), false),
			try([]string{"404"}, map[string][]string{"default": {"application/json"}}, apiResp(u, 404, "Content-Type", "application/json"), true),
			try([]string{"404"}, map[string][]string{"404": nil}, apiResp(u, 404, "Content-Type", "text/plain"), false)}},
			report.Pass, []string{"All 4 requests", "4 of the 7 operations"}},
		{"a body that is not JSON", &gather.APIErrorsDoc{Candidates: 2, Tries: []gather.APIErrorTry{
			try([]string{"404"}, problemJSON, apiResp(u, 404, "Content-Type", "application/problem+json"), true),
			try([]string{"404"}, problemJSON, apiResp(u, 404, "Content-Type", "application/problem+json"), false)}},
			report.Partial, []string{"1 of 2", "not valid JSON", "Return the status codes"}},
		{"wrong status and wrong type", &gather.APIErrorsDoc{Candidates: 2, Tries: []gather.APIErrorTry{
			try([]string{"400", "404"}, problemJSON, apiResp(u, 500, "Content-Type", "application/problem+json"), true),
			try([]string{"404"}, problemJSON, apiResp(u, 404), false)}},
			report.Fail, []string{"0 of 2", "answered 500, not the documented 400 or 404", "as no Content-Type"}},
		{"no answer", &gather.APIErrorsDoc{Candidates: 1, Tries: []gather.APIErrorTry{try([]string{"404"}, problemJSON, apiRefused(u), false)}},
			report.Fail, []string{"got no answer", "see api.servers"}},
	}
	for _, c := range cases {
		got := judgeErrors(t, c.doc)
		if got.Status != c.status {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Status, got.Message, c.status)
		}
		for _, w := range c.says {
			if !strings.Contains(got.Message, w) {
				t.Errorf("%s: %q lacks %q", c.name, got.Message, w)
			}
		}
		if strings.Contains(got.Message, "dial tcp") {
			t.Errorf("%s: %q leaks the transport error", c.name, got.Message)
		}
	}
}
