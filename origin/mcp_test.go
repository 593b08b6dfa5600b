package origin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/mcpserver"
)

var toolNames = []string{"compare_sites", "deep_scan", "get_badge", "get_check", "get_check_definitions", "get_recommendations",
	"get_showcase", "scan_batch", "scan_url", "validate_agent_card", "validate_llms_txt"}

func connect(t *testing.T, o *testOrigin, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agentready-test", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	hc := edgetest.LoadContract(t).Client(t) // every answer checked against /openapi.json
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: o.URL + "/api/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, opts)
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func structured(t *testing.T, res *mcp.CallToolResult, into any) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("structured content: %v (%s)", err, b)
	}
	if len(res.Content) == 0 {
		t.Fatal("no text content for older clients")
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !jsonEqual(tc.Text, string(b)) {
		t.Errorf("the text content is not the same JSON as structuredContent")
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func errText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// Both handshakes list the eleven tools and scan a site.
func TestMCPGoClientBothEras(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "peer")
	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("version="+version, func(t *testing.T) {
			cs := connect(t, o, version)
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range lt.Tools {
				names = append(names, tl.Name)
				if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || !tl.Annotations.IdempotentHint || tl.Annotations.OpenWorldHint == nil {
					t.Errorf("%s: annotations %+v", tl.Name, tl.Annotations)
				}
				if tl.OutputSchema == nil {
					t.Errorf("%s: no output schema", tl.Name)
				}
			}
			sort.Strings(names)
			if !reflect.DeepEqual(names, toolNames) {
				t.Fatalf("tools %v", names)
			}
			res := call(t, cs, "scan_url", map[string]any{"url": s.URL})
			if res.IsError {
				t.Fatalf("scan_url: %s", errText(res))
			}
			var out struct {
				URL    string         `json:"url"`
				Score  report.Score   `json:"score"`
				Checks []report.Check `json:"checks"`
			}
			structured(t, res, &out)
			if len(out.Checks) != 48 || out.Score.Grade == "" {
				t.Errorf("scan_url: %d checks, grade %q", len(out.Checks), out.Score.Grade)
			}
		})
	}
}

// The 2026-07-28 wire protocol, raw: server/discover and tools/list with cache hints; legacy initialize.
func TestMCPWireProtocol(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	rpc := func(method string, params string, hdr map[string]string) (int, map[string]any) {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
		req, _ := http.NewRequest("POST", o.URL+"/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := edgetest.LoadContract(t).Client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	meta := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`
	modern := func(method string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	}
	code, m := rpc("server/discover", meta, modern("server/discover"))
	res, _ := m["result"].(map[string]any)
	if code != 200 || res == nil || res["supportedVersions"] == nil {
		t.Fatalf("server/discover: %d %v", code, m)
	}
	code, m = rpc("tools/list", meta, modern("tools/list"))
	res, _ = m["result"].(map[string]any)
	if code != 200 || res == nil || res["ttlMs"] != float64(3600000) || res["cacheScope"] != "public" || len(res["tools"].([]any)) != 11 {
		t.Fatalf("tools/list: %d ttl=%v scope=%v", code, res["ttlMs"], res["cacheScope"])
	}
	code, m = rpc("tools/list", meta, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	if code != 400 {
		t.Errorf("a Mcp-Method header that disagrees with the body: %d %v", code, m)
	}
	code, m = rpc("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`, nil)
	res, _ = m["result"].(map[string]any)
	if code != 200 || res == nil || res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: %d %v", code, m)
	}
	resp, _ := get(t, o.URL+"/api/mcp")
	if resp.StatusCode != 405 {
		t.Errorf("GET /api/mcp on a stateless server: %d", resp.StatusCode)
	}
	// A browser page on another origin may not drive the server.
	req, _ := http.NewRequest("POST", o.URL+"/api/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if resp, err := edgetest.LoadContract(t).Client(t).Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("cross-origin browser request: %v %v", resp.StatusCode, err)
	}
}

// mcpEnv is what the TestMCPTools cases share: one origin, one session, a
// site that passes most checks (full), one that fails many (peer), and an
// address nobody listens on (dead).
type mcpEnv struct {
	fac        *facilitator.Server
	o          *testOrigin
	cs         *mcp.ClientSession
	full, peer *fixture.Site
	dead       string
}

// Every tool, one named case per behaviour: a failure names the tool, the
// case and the condition that broke. Cases do not depend on each other's
// order; one that needs a scan to exist (get_showcase) makes it first.
func TestMCPTools(t *testing.T) {
	fac := facilitator.Start()
	t.Cleanup(fac.Close)
	o := startOrigin(t, origin.Config{Payment: x402.Config{PayTo: testPayee}, FacilitatorURL: fac.URL}, nil)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	e := mcpEnv{fac: fac, o: o, cs: connect(t, o, ""), full: site(t, "full"), peer: site(t, "peer"), dead: dead}

	for _, tc := range []struct {
		name string
		run  func(*testing.T, mcpEnv)
	}{
		{"get_check_definitions/all", mcpDefinitionsAll},
		{"get_check_definitions/level 5", mcpDefinitionsLevel5},
		{"get_check/with a url", mcpGetCheck},
		{"scan_url/only_failing", mcpScanOnlyFailing},
		{"scan_url/profile", mcpScanProfile},
		{"compare_sites", mcpCompareSites},
		{"get_recommendations", mcpRecommendations},
		{"deep_scan/payment required", mcpDeepScan},
		{"deep_scan/paid in _meta", mcpDeepScanPaid},
		{"scan_batch/one site up, one down", mcpScanBatch},
		{"validate_llms_txt/from a url", mcpLLMSFromURL},
		{"validate_llms_txt/inline", mcpLLMSInline},
		{"validate_agent_card/from a url", mcpAgentCardFromURL},
		{"validate_agent_card/inline", mcpAgentCardInline},
		{"get_badge", mcpBadge},
		{"get_showcase/pages", mcpShowcase},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}

	// Refusals: each must be a tool error (isError), and where it says
	// something specific, say it.
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = e.full.URL
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		says       string // "" when only the refusal itself is pinned
	}{
		{"get_check_definitions/level 9", "get_check_definitions", map[string]any{"level": 9}, ""},
		{"get_check_definitions/a string level", "get_check_definitions", map[string]any{"level": "two"}, "arguments"},
		{"get_check/unknown id", "get_check", map[string]any{"id": "9.9"}, "no check"},
		{"get_check/no id", "get_check", map[string]any{}, ""},
		{"scan_url/unreachable", "scan_url", map[string]any{"url": e.dead}, "site unreachable"},
		{"scan_url/javascript url", "scan_url", map[string]any{"url": "javascript:alert(1)"}, "invalid url"},
		{"scan_url/numeric url", "scan_url", map[string]any{"url": 42}, ""},
		{"scan_url/unknown profile", "scan_url", map[string]any{"url": e.full.URL, "profile": "zz-prof-9c1e"}, ""},
		{"compare_sites/one url", "compare_sites", map[string]any{"urls": []string{e.full.URL}}, ""},
		{"scan_batch/eleven urls", "scan_batch", map[string]any{"urls": eleven}, ""},
		{"validate_llms_txt/neither content nor url", "validate_llms_txt", map[string]any{}, ""},
		{"validate_llms_txt/unreachable", "validate_llms_txt", map[string]any{"url": e.dead}, "unreachable"},
		{"validate_agent_card/not JSON", "validate_agent_card", map[string]any{"content": "not json"}, ""},
		{"get_showcase/bad cursor", "get_showcase", map[string]any{"cursor": "garbage"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, e.cs, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("%s %v was accepted; want a tool error", tc.tool, tc.args)
			}
			if !strings.Contains(errText(res), tc.says) {
				t.Errorf("the error %q does not say %q", errText(res), tc.says)
			}
		})
	}
}

func mcpDefinitionsAll(t *testing.T, e mcpEnv) {
	var out struct{ Checks []map[string]any }
	structured(t, call(t, e.cs, "get_check_definitions", map[string]any{}), &out)
	if len(out.Checks) != 58 {
		t.Errorf("%d definitions, want 58 (48 web + 10 repository)", len(out.Checks))
	}
}

func mcpDefinitionsLevel5(t *testing.T, e mcpEnv) {
	var out struct{ Checks []map[string]any }
	structured(t, call(t, e.cs, "get_check_definitions", map[string]any{"level": 5}), &out)
	if len(out.Checks) != 10 {
		t.Errorf("%d level-5 definitions, want 10", len(out.Checks))
	}
}

func mcpGetCheck(t *testing.T, e mcpEnv) {
	var out struct {
		Definition map[string]any `json:"definition"`
		Result     *report.Check  `json:"result"`
	}
	structured(t, call(t, e.cs, "get_check", map[string]any{"id": "1.12", "url": e.full.URL}), &out)
	if out.Definition["name"] != "MCP Server" {
		t.Errorf("definition name %v, want MCP Server", out.Definition["name"])
	}
	if out.Result == nil {
		t.Fatal("no result although a url was given")
	}
	if out.Result.Status != "pass" {
		t.Errorf("1.12 on the full site: %s (%s), want pass", out.Result.Status, out.Result.Message)
	}
}

// scan_url's structured content carries the read suite, the profile and
// the interactions; profile re-judges the same scan as another kind.
func mcpScanProfile(t *testing.T, e mcpEnv) {
	var own, as struct {
		Score        report.Score         `json:"score"`
		Read         *report.Read         `json:"read"`
		Profile      *report.Profile      `json:"profile"`
		Interactions []report.Interaction `json:"interactions"`
	}
	structured(t, call(t, e.cs, "scan_url", map[string]any{"url": e.full.URL}), &own)
	if own.Read == nil || len(own.Read.Checks) != len(checks.Read()) || own.Profile == nil || own.Profile.Source == "requested" {
		t.Fatalf("scan_url: read %v, profile %+v", own.Read != nil, own.Profile)
	}
	want := "commerce"
	if own.Profile.ID == want {
		want = "docs"
	}
	structured(t, call(t, e.cs, "scan_url", map[string]any{"url": e.full.URL, "profile": want}), &as)
	if as.Profile == nil || as.Profile.ID != want || as.Profile.Source != "requested" || as.Profile.Detected != own.Profile.Detected {
		t.Errorf("scan_url profile=%s: %+v", want, as.Profile)
	}
	if as.Score != own.Score || as.Read == nil || as.Read.Score != own.Read.Score {
		t.Error("the profile changed the score or the read suite")
	}
	// The cached result the scan path shares is not changed by a re-judging.
	structured(t, call(t, e.cs, "scan_url", map[string]any{"url": e.full.URL}), &own)
	if own.Profile == nil || own.Profile.Source == "requested" {
		t.Errorf("a later scan_url without profile got the requested one: %+v", own.Profile)
	}
}

func mcpScanOnlyFailing(t *testing.T, e mcpEnv) {
	var out struct{ Checks []report.Check }
	structured(t, call(t, e.cs, "scan_url", map[string]any{"url": e.peer.URL, "only_failing": true}), &out)
	for _, c := range out.Checks {
		if c.Status == "pass" || c.Status == "na" {
			t.Errorf("only_failing returned %s with status %s", c.ID, c.Status)
		}
	}
	if len(out.Checks) == 0 || len(out.Checks) == 48 {
		t.Errorf("%d failing checks on the peer site, want some but not all 48", len(out.Checks))
	}
}

func mcpCompareSites(t *testing.T, e mcpEnv) {
	var out struct {
		Sites       []map[string]any
		Differences []map[string]any
	}
	structured(t, call(t, e.cs, "compare_sites", map[string]any{"urls": []string{e.full.URL, e.peer.URL, e.dead}}), &out)
	if len(out.Sites) != 3 {
		t.Fatalf("%d sites compared, want 3", len(out.Sites))
	}
	if out.Sites[0]["level"] != float64(3) {
		t.Errorf("the full site is at level %v, want 3", out.Sites[0]["level"])
	}
	if out.Sites[2]["error"] == nil {
		t.Errorf("the unreachable site carries no error: %v", out.Sites[2])
	}
	if len(out.Differences) == 0 {
		t.Error("no differences between the full and the peer site")
	}
}

func mcpRecommendations(t *testing.T, e mcpEnv) {
	var out struct {
		TargetLevel     int `json:"targetLevel"`
		Recommendations []struct {
			Rank    int
			ID      string
			Level   int
			Snippet string
		}
	}
	structured(t, call(t, e.cs, "get_recommendations", map[string]any{"url": e.peer.URL}), &out)
	if out.TargetLevel != 1 {
		t.Errorf("target level %d for the peer site, want 1", out.TargetLevel)
	}
	if len(out.Recommendations) == 0 {
		t.Fatal("no recommendations for the peer site")
	}
	if first := out.Recommendations[0]; first.Level != 1 || first.Rank != 1 {
		t.Errorf("the first recommendation is rank %d at level %d, want rank 1 at level 1", first.Rank, first.Level)
	}
	snippets := 0
	for _, r := range out.Recommendations {
		if r.Snippet != "" {
			snippets++
		}
	}
	if snippets < 3 {
		t.Errorf("only %d recommendations carry a snippet, want at least 3", snippets)
	}
}

func mcpDeepScan(t *testing.T, e mcpEnv) {
	res := call(t, e.cs, "deep_scan", map[string]any{"url": e.peer.URL})
	var pr struct {
		X402Version int `json:"x402Version"`
		Accepts     []struct {
			Amount, Network string
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &pr)
	if !res.IsError {
		t.Error("deep_scan without payment is not a tool error")
	}
	if pr.X402Version != 2 {
		t.Errorf("x402Version %d, want 2: %s", pr.X402Version, b)
	}
	if len(pr.Accepts) != 1 {
		t.Fatalf("%d payment options, want 1: %s", len(pr.Accepts), b)
	}
	if pr.Accepts[0].Amount != "100000" || !strings.HasPrefix(pr.Accepts[0].Network, "solana:") {
		t.Errorf("asks %s on %s, want 100000 (0.10 USDC) on solana:", pr.Accepts[0].Amount, pr.Accepts[0].Network)
	}
}

// The x402 MCP transport: the payment in _meta["x402/payment"], the deep
// report in the result, the settlement in _meta["x402/payment-response"] and
// the receipt in _meta["agentready/payment-receipt"]; the same payment again
// with its receipt returns the same report without a second settlement.
func mcpDeepScanPaid(t *testing.T, e mcpEnv) {
	var pr x402.PaymentRequired
	structured(t, call(t, e.cs, "deep_scan", map[string]any{"url": e.full.URL}), &pr)
	payload := map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0],
		"payload": map[string]string{"transaction": facilitator.Token("McpPayer", pr.Accepts[0].Amount, pr.Accepts[0].PayTo, "mcp-1")}}
	settlesBefore := len(e.fac.Calls("/settle"))
	var first []byte
	meta := mcp.Meta{"x402/payment": payload}
	for i := range 2 {
		res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deep_scan", Arguments: map[string]any{"url": e.full.URL},
			Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("paid deep_scan %d: %v %+v", i, err, res)
		}
		var out struct {
			URL  string `json:"url"`
			Deep *struct {
				Probes []json.RawMessage `json:"probes"`
			} `json:"deep"`
		}
		structured(t, res, &out)
		if out.Deep == nil || out.URL == "" {
			t.Errorf("paid deep_scan %d: no deep block", i)
		}
		settled, _ := res.Meta["x402/payment-response"].(map[string]any)
		if settled["success"] != true || settled["transaction"] == "" {
			t.Errorf("paid deep_scan %d: settlement %v", i, res.Meta)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if i == 0 {
			first = b
			receipt, _ := res.Meta["agentready/payment-receipt"].(string)
			if receipt == "" {
				t.Fatalf("paid deep_scan: no receipt in %v", res.Meta)
			}
			meta = mcp.Meta{"x402/payment": payload, "agentready/payment-receipt": receipt}
		} else if string(b) != string(first) {
			t.Error("the same payment sent again returned another report")
		}
	}
	if n := len(e.fac.Calls("/settle")) - settlesBefore; n != 1 {
		t.Errorf("%d settlements for one payment over MCP", n)
	}
	forged := map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0],
		"payload": map[string]string{"transaction": "Zm9yZ2VkOng="}} // base64("forged:x")
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deep_scan", Arguments: map[string]any{"url": e.full.URL},
		Meta: mcp.Meta{"x402/payment": forged}})
	if err != nil || !res.IsError {
		t.Fatalf("forged payment: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), "invalid_exact_svm_payload_transaction_signature") || !strings.Contains(string(b), `"x402Version":2`) {
		t.Errorf("forged payment: %s", b)
	}
}

func mcpScanBatch(t *testing.T, e mcpEnv) {
	var out struct{ Results []map[string]any }
	structured(t, call(t, e.cs, "scan_batch", map[string]any{"urls": []string{e.full.URL, e.dead}}), &out)
	if len(out.Results) != 2 {
		t.Fatalf("%d results for 2 urls", len(out.Results))
	}
	if out.Results[0]["score"] == nil {
		t.Errorf("the reachable site has no score: %v", out.Results[0])
	}
	if out.Results[1]["error"] == nil {
		t.Errorf("the unreachable site has no error: %v", out.Results[1])
	}
}

type llmsOut struct {
	Source string
	Report struct {
		Valid    bool
		Findings []struct{ Line int }
	}
}

func mcpLLMSFromURL(t *testing.T, e mcpEnv) {
	var out llmsOut
	structured(t, call(t, e.cs, "validate_llms_txt", map[string]any{"url": e.full.URL}), &out)
	if !out.Report.Valid {
		t.Errorf("the full site's llms.txt is invalid: %+v", out.Report)
	}
	if out.Source != e.full.URL+"/llms.txt" {
		t.Errorf("source %q, want %s/llms.txt", out.Source, e.full.URL)
	}
}

func mcpLLMSInline(t *testing.T, e mcpEnv) {
	var out llmsOut
	structured(t, call(t, e.cs, "validate_llms_txt", map[string]any{"content": "no title\n## S\n- [a](https://a.example/)\n"}), &out)
	if out.Report.Valid {
		t.Error("an llms.txt without a title is valid")
	}
	if out.Source != "inline" {
		t.Errorf("source %q, want inline", out.Source)
	}
	if len(out.Report.Findings) == 0 || out.Report.Findings[0].Line != 1 {
		t.Errorf("findings %+v, want the first on line 1 (the missing title)", out.Report.Findings)
	}
}

type cardOut struct {
	Report struct {
		Valid   bool
		Version string
		Missing []string
	}
}

func mcpAgentCardFromURL(t *testing.T, e mcpEnv) {
	var out cardOut
	structured(t, call(t, e.cs, "validate_agent_card", map[string]any{"url": e.full.URL}), &out)
	if !out.Report.Valid || out.Report.Version != "1.0" {
		t.Errorf("the full site's agent card: valid %v version %q, want valid 1.0 (missing %v)", out.Report.Valid, out.Report.Version, out.Report.Missing)
	}
}

func mcpAgentCardInline(t *testing.T, e mcpEnv) {
	var out cardOut
	structured(t, call(t, e.cs, "validate_agent_card", map[string]any{"content": `{"name":"x","description":"y"}`}), &out)
	if out.Report.Valid {
		t.Error("a card with only name and description is valid")
	}
	if len(out.Report.Missing) == 0 {
		t.Error("no missing members named for a card with only name and description")
	}
}

func mcpBadge(t *testing.T, e mcpEnv) {
	var out struct {
		URL, BadgeURL, Markdown, HTML string
		Score                         int
	}
	structured(t, call(t, e.cs, "get_badge", map[string]any{"url": e.full.URL}), &out)
	if !strings.HasPrefix(out.BadgeURL, e.o.URL+"/api/badge?url=") {
		t.Errorf("badge URL %q is not %s/api/badge?url=…", out.BadgeURL, e.o.URL)
	}
	if !strings.Contains(out.Markdown, out.BadgeURL) {
		t.Errorf("the Markdown does not embed the badge URL: %q", out.Markdown)
	}
	if !strings.Contains(out.HTML, "<img") {
		t.Errorf("the HTML is not an <img>: %q", out.HTML)
	}
	// Both embeds link to the report page (the edge serves it), not to the
	// event stream of a charged scan.
	report := e.o.URL + "/report?url=" + url.QueryEscape(out.URL)
	if !strings.HasSuffix(out.Markdown, "]("+report+")") || !strings.Contains(out.HTML, `<a href="`+strings.ReplaceAll(report, "&", "&amp;")+`">`) {
		t.Errorf("the embeds do not link to %s:\n%s\n%s", report, out.Markdown, out.HTML)
	}
	if out.Score < 90 {
		t.Errorf("score %d for the full site, want at least 90", out.Score)
	}
}

// The showcase ranks what history holds. A scan's answer comes after its
// history entry is written, so the scans made here are there without waiting.
func mcpShowcase(t *testing.T, e mcpEnv) {
	for _, s := range []*fixture.Site{e.full, e.peer} {
		if res := call(t, e.cs, "scan_url", map[string]any{"url": s.URL}); res.IsError {
			t.Fatalf("scan_url %s: %s", s.URL, errText(res))
		}
	}
	var out struct {
		Sites      []map[string]any
		Total      int
		NextCursor string
	}
	structured(t, call(t, e.cs, "get_showcase", map[string]any{"limit": 1}), &out)
	if out.Total < 2 {
		t.Errorf("total %d after scanning two sites, want at least 2", out.Total)
	}
	if len(out.Sites) != 1 {
		t.Fatalf("%d sites on a page of limit 1", len(out.Sites))
	}
	if out.Sites[0]["url"] != e.full.URL+"/" {
		t.Errorf("first site %v, want the best-scoring %s/", out.Sites[0]["url"], e.full.URL)
	}
	if out.NextCursor == "" {
		t.Fatal("no next cursor although more sites exist")
	}
	first := out.Sites[0]["url"]
	structured(t, call(t, e.cs, "get_showcase", map[string]any{"limit": 1, "cursor": out.NextCursor}), &out)
	if len(out.Sites) != 1 {
		t.Fatalf("%d sites on the second page, want 1", len(out.Sites))
	}
	if out.Sites[0]["url"] == first {
		t.Errorf("the second page repeats the first site %v", first)
	}
}

// Scans through MCP count against the same daily allowance as REST; when it is
// used up, scanning tools answer with x402 payment requirements and free tools still work.
// A deployment without a payee advertises no payment: the tools say when
// the allowance comes back.
func TestMCPAllowanceExhausted(t *testing.T) {
	o := startOrigin(t, origin.Config{Allowances: identity.Allowances{Anonymous: 2, Token: 2, APIKey: 2}, Payment: x402.Config{PayTo: testPayee}}, nil)
	unpaid := startOrigin(t, origin.Config{Allowances: identity.Allowances{Anonymous: 1, Token: 1, APIKey: 1}}, nil)
	ucs := connect(t, unpaid, "")
	s0 := site(t, "empty")
	call(t, ucs, "scan_url", map[string]any{"url": s0.URL})
	res := call(t, ucs, "scan_url", map[string]any{"url": s0.URL})
	if b, _ := json.Marshal(res.StructuredContent); !res.IsError || strings.Contains(string(b), "x402Version") || !strings.Contains(errText(res), "retry after") {
		t.Errorf("over the allowance without a payee: %s %s", errText(res), b)
	}
	// Worded as the HTTP refusal words it (apierr.RetryAt): a time and a wait.
	if !regexp.MustCompile(`retry after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in (23|24) h \d\d min\)`).MatchString(errText(res)) {
		t.Errorf("the wait is not worded as HTTP words it: %s", errText(res))
	}
	cs := connect(t, o, "")
	s := site(t, "peer")
	if res := call(t, cs, "scan_batch", map[string]any{"urls": []string{s.URL, s.URL}}); res.IsError {
		t.Fatalf("first two scans: %s", errText(res))
	}
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"scan_url", map[string]any{"url": s.URL}},
		{"get_check", map[string]any{"id": "1.1", "url": s.URL}},
		{"compare_sites", map[string]any{"urls": []string{s.URL, s.URL}}},
		{"get_recommendations", map[string]any{"url": s.URL}},
		{"scan_batch", map[string]any{"urls": []string{s.URL}}},
		{"get_badge", map[string]any{"url": s.URL}},
	} {
		res := call(t, cs, tc.name, tc.args)
		b, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || !strings.Contains(string(b), `"x402Version":2`) || !strings.Contains(errText(res), "allowance") {
			t.Errorf("%s over the allowance: %s", tc.name, b)
		}
	}
	for _, free := range []struct {
		name string
		args map[string]any
	}{
		{"get_check_definitions", map[string]any{}},
		{"validate_llms_txt", map[string]any{"content": "# T\n> s\n## D\n- [a](https://a.example/)\n"}},
		{"get_showcase", map[string]any{}},
	} {
		if res := call(t, cs, free.name, free.args); res.IsError {
			t.Errorf("%s is free but failed: %s", free.name, errText(res))
		}
	}
}

// The server card is generated from the same definitions as tools/list, and
// our own scanner grades the service: 1.12 passes and 3.7 finds every tool well described.
// The card and the instructions also send agents to the monitor endpoints,
// which are HTTP only: the card lists exactly the monitor operations of
// /openapi.json, and no tool claims to be one.
func TestMCPCardAndSelfScan(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	cs := connect(t, o, "")
	lt, _ := cs.ListTools(context.Background(), nil)
	doc, err := openapi3.NewLoader().LoadFromData(origin.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string // "METHOD path" of every monitor operation /openapi.json describes
	for _, path := range doc.Paths.InMatchingOrder() {
		if path == "/api/monitors" || strings.HasPrefix(path, "/api/monitors/") {
			for method := range doc.Paths.Value(path).Operations() {
				documented = append(documented, method+" "+path)
			}
		}
	}
	sort.Strings(documented)
	if len(documented) != 8 {
		t.Fatalf("/openapi.json describes %d monitor operations, want 8: %v", len(documented), documented)
	}
	instructions := cs.InitializeResult().Instructions
	if !strings.Contains(instructions, "not tools of this server") {
		t.Errorf("the instructions do not say monitors are HTTP only: %s", instructions)
	}
	for _, op := range documented {
		if !strings.Contains(instructions, op) {
			t.Errorf("the instructions do not name %s", op)
		}
	}
	for _, tl := range lt.Tools {
		if strings.Contains(strings.ToLower(tl.Name), "monitor") {
			t.Errorf("tool %s: monitors are not MCP tools, and the card says so", tl.Name)
		}
	}
	for _, p := range []string{"/.well-known/mcp.json", "/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json"} {
		resp, b := get(t, o.URL+p)
		var card struct {
			Description string
			Remotes     []struct{ URL string } `json:"remotes"`
			Tools       []struct {
				Name        string
				Description string
				InputSchema any `json:"inputSchema"`
			}
			Meta map[string]struct {
				Description string
				BaseURL     string `json:"baseUrl"`
				OpenAPI     string
				Webhooks    string
				Endpoints   []struct{ Method, Path, Summary string }
			} `json:"_meta"`
		}
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || json.Unmarshal(b, &card) != nil {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		if card.Remotes[0].URL != o.URL+"/api/mcp" || len(card.Tools) != len(lt.Tools) {
			t.Fatalf("%s: remotes %v, %d tools", p, card.Remotes, len(card.Tools))
		}
		if n := len(card.Description); n == 0 || n > 100 {
			t.Errorf("%s: description of %d characters (the registry allows 1 to 100)", p, n)
		}
		mon, ok := card.Meta[mcpserver.MonitorsMetaKey]
		if !ok || !strings.Contains(mon.Description, "not MCP tools") || mon.OpenAPI != o.URL+"/openapi.json" || mon.BaseURL != o.URL ||
			!strings.HasSuffix(mon.Webhooks, "/docs/webhooks.md") {
			t.Errorf("%s: _meta[%s] = %+v", p, mcpserver.MonitorsMetaKey, mon)
		}
		var listed []string
		for _, e := range mon.Endpoints {
			listed = append(listed, e.Method+" "+e.Path)
			if len(e.Summary) < 20 {
				t.Errorf("%s: %s %s has no useful summary: %q", p, e.Method, e.Path, e.Summary)
			}
		}
		sort.Strings(listed)
		if !reflect.DeepEqual(listed, documented) {
			t.Errorf("%s lists the monitor endpoints %v; /openapi.json describes %v", p, listed, documented)
		}
		for i, tl := range lt.Tools {
			a, _ := json.Marshal(tl.InputSchema)
			b, _ := json.Marshal(card.Tools[i].InputSchema)
			if card.Tools[i].Name != tl.Name || card.Tools[i].Description != tl.Description || !jsonEqual(string(a), string(b)) {
				t.Errorf("%s: tool %d differs from tools/list", p, i)
			}
		}
	}
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	res, err := sc.Scan(context.Background(), o.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1.12", "3.7"} {
		c, _ := res.Check(id)
		if c.Status != report.Pass {
			t.Errorf("self-scan %s: %s — %s", id, c.Status, c.Message)
		}
	}
	if c, _ := res.Check("3.7"); !strings.Contains(c.Message, "11 of 11") {
		t.Errorf("3.7: %s", c.Message)
	}
}

// The official TypeScript SDK client (tests/node, pinned in package-lock.json)
// lists the tools and calls scan_url.
func TestMCPTypeScriptClient(t *testing.T) {
	node := testenv.Node(t, "@modelcontextprotocol/sdk")
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "peer")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, filepath.Join(testenv.NodeDir(), "client.mjs"), o.URL+"/api/mcp", s.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           []string `json:"tools"`
		Score           int      `json:"score"`
		Checks          int      `json:"checks"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sort.Strings(got.Tools)
	if !reflect.DeepEqual(got.Tools, toolNames) || got.Checks != 48 || got.ProtocolVersion == "" {
		t.Errorf("TypeScript client saw %+v", got)
	}
}

// rpcDo sends one request to /api/mcp with the transport's usual headers
// (Content-Type and Accept; an empty value in hdr removes one).
func rpcDo(t *testing.T, base, method, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req := testenv.Request(t, method, base+"/api/mcp", body, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return testenv.Do(t, edgetest.LoadContract(t).Client(t), req)
}

// rpcErr is a JSON-RPC 2.0 error response, checked member by member.
type rpcErr struct {
	ID      any
	Code    int
	Message string
	Data    map[string]any
}

func parseRPCError(t *testing.T, b []byte) rpcErr {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("not a JSON object: %.300s", b)
	}
	if len(top) != 3 || string(top["jsonrpc"]) != `"2.0"` || top["id"] == nil || top["error"] == nil {
		t.Fatalf("not a JSON-RPC error response (jsonrpc, id, error): %.300s", b)
	}
	var e struct {
		Code    *float64       `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
	var members map[string]json.RawMessage
	json.Unmarshal(top["error"], &members)
	if err := json.Unmarshal(top["error"], &e); err != nil || e.Code == nil || *e.Code != float64(int(*e.Code)) || e.Message == "" {
		t.Fatalf("error member is not {code: integer, message: string}: %s", top["error"])
	}
	for k := range members {
		if k != "code" && k != "message" && k != "data" {
			t.Errorf("error member has %q", k)
		}
	}
	var id any
	json.Unmarshal(top["id"], &id)
	switch id.(type) {
	case nil, string, float64:
	default:
		t.Errorf("id must be null, a string or a number: %s", top["id"])
	}
	return rpcErr{ID: id, Code: int(*e.Code), Message: e.Message, Data: e.Data}
}

const canary = "ZQX<b>"

var meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// Every way /api/mcp can refuse a request answers a JSON-RPC error object
// (application/json, "jsonrpc":"2.0", the request's id or null) with a
// proper HTTP status, and none quotes the request: the canary planted in
// bodies, headers and names never comes back.
func TestMCPTransportErrors(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	modern := []string{"MCP-Protocol-Version", "2026-07-28"}
	with := func(a []string, b ...string) []string { return append(append([]string{}, a...), b...) }
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat(canary, 70<<10/len(canary)) + `"}}`
	batch := func(n int, first string) string {
		items := []string{}
		for i := 0; i < n; i++ {
			items = append(items, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1))
		}
		if first != "" {
			items[0] = first
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	for _, tc := range []struct {
		name, method, body string
		hdr                []string
		status, code       int
		id                 any
	}{
		{"GET", "GET", "", nil, 405, -32600, nil},
		{"DELETE", "DELETE", "", nil, 405, -32600, nil},
		{"PUT", "PUT", `{}`, nil, 405, -32600, nil},
		{"PATCH", "PATCH", `{}`, nil, 405, -32600, nil},
		{"OPTIONS", "OPTIONS", "", nil, 405, -32600, nil},
		{"text/plain body", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Content-Type", "text/plain"}, 415, -32600, nil},
		{"no content type", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Content-Type", ""}, 415, -32600, nil},
		{"odd content type", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Content-Type", "application/" + canary}, 415, -32600, nil},
		{"no Accept", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Accept", ""}, 406, -32600, nil},
		{"Accept json only", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Accept", "application/json"}, 406, -32600, nil},
		{"Accept event-stream only", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Accept", "text/event-stream"}, 406, -32600, nil},
		{"malformed JSON", "POST", `{"jsonrpc":"2.0","id":1,"method":"` + canary, nil, 400, -32700, nil},
		{"empty body", "POST", "", nil, 400, -32700, nil},
		{"blank body", "POST", " \n ", nil, 400, -32700, nil},
		{"a string", "POST", `"` + canary + `"`, nil, 400, -32600, nil},
		{"no jsonrpc member", "POST", `{"id":5,"method":"tools/list"}`, nil, 400, -32600, 5.0},
		{"jsonrpc 1.0", "POST", `{"jsonrpc":"1.0","id":5,"method":"tools/list"}`, nil, 400, -32600, 5.0},
		{"object id", "POST", `{"jsonrpc":"2.0","id":{"x":"` + canary + `"},"method":"tools/list"}`, nil, 400, -32600, nil},
		{"fractional id", "POST", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, nil, 400, -32600, nil},
		{"huge id", "POST", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, nil, 400, -32600, nil},
		{"numeric method", "POST", `{"jsonrpc":"2.0","id":"a","method":42}`, nil, 400, -32600, "a"},
		{"response without result", "POST", `{"jsonrpc":"2.0","id":5}`, nil, 400, -32600, 5.0},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":5,"method":"` + canary + `"}`, nil, 400, -32601, 5.0},
		{"unknown method, 2026-07-28", "POST", `{"jsonrpc":"2.0","id":5,"method":"` + canary + `","params":{` + meta2026 + `}}`, with(modern, "Mcp-Method", canary), 404, -32601, 5.0},
		{"call without id", "POST", `{"jsonrpc":"2.0","method":"tools/list"}`, nil, 400, -32600, nil},
		{"notification with id", "POST", `{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, nil, 400, -32600, 5.0},
		{"tools/call without params", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, nil, 400, -32600, 5.0},
		{"unsupported protocol version", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, []string{"MCP-Protocol-Version", canary}, 400, -32022, 5.0},
		{"future protocol version", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, []string{"MCP-Protocol-Version", "2099-01-01"}, 400, -32022, 5.0},
		{"body over 64 KiB", "POST", big, nil, 413, -32600, nil},
		{"cross-origin browser", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 403, -32600, nil},
		{"Last-Event-ID on POST", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, []string{"Last-Event-ID", canary}, 400, -32600, 5.0},
		{"Mcp-Method disagrees", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{` + meta2026 + `}}`, with(modern, "Mcp-Method", "server/discover"), 400, -32020, 5.0},
		{"2026-07-28 without _meta", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`, with(modern, "Mcp-Method", "tools/list"), 400, -32602, 5.0},
		{"Mcp-Name disagrees", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"scan_url","arguments":{"url":"example.com"},` + meta2026 + `}}`, with(modern, "Mcp-Method", "tools/call", "Mcp-Name", canary), 400, -32020, 5.0},
		{"unknown tool", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"` + canary + `","arguments":{}}}`, nil, 200, -32602, 5.0},
		{"initialize params not an object", "POST", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":"` + canary + `"}`, nil, 200, -32602, 5.0},
		{"empty batch", "POST", `[]`, nil, 400, -32600, nil},
		{"batch of 17", "POST", batch(17, ""), nil, 400, -32600, nil},
		{"batch with a shared id", "POST", batch(2, `{"jsonrpc":"2.0","id":2,"method":"ping"}`), nil, 400, -32600, nil},
		{"batch with 2 and 2.0", "POST", batch(2, `{"jsonrpc":"2.0","id":2.0,"method":"ping"}`), nil, 400, -32600, nil},
		{"batch with a bad member", "POST", batch(2, `{"jsonrpc":"2.0","id":1,"method":7}`), nil, 400, -32600, nil},
		{"batch under 2025-06-18", "POST", batch(2, ""), []string{"MCP-Protocol-Version", "2025-06-18"}, 400, -32600, nil},
		{"batch under 2026-07-28", "POST", batch(2, ""), []string{"MCP-Protocol-Version", "2026-07-28"}, 400, -32600, nil},
		{"batch initializing 2025-11-25", "POST", batch(2, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`), nil, 400, -32600, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := rpcDo(t, o.URL, tc.method, tc.body, tc.hdr...)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q, want %d application/json: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, b)
			}
			e := parseRPCError(t, b)
			if e.Code != tc.code || e.ID != tc.id {
				t.Errorf("code %d id %v, want %d %v: %s", e.Code, e.ID, tc.code, tc.id, e.Message)
			}
			if strings.Contains(string(b), "ZQX") || strings.Contains(string(b), "Go value") || strings.Contains(string(b), "malformed payload") {
				t.Errorf("the error quotes the request or a library: %s", b)
			}
			if e.Data["docs"] == nil {
				t.Errorf("no docs link: %s", b)
			}
			if tc.code == -32022 && fmt.Sprint(e.Data["supported"]) != fmt.Sprint(mcpserver.ProtocolVersions) {
				t.Errorf("unsupported version error lists %v", e.Data["supported"])
			}
			if tc.status == 405 && resp.Header.Get("Allow") != "POST" {
				t.Errorf("405 without Allow: POST (%q)", resp.Header.Get("Allow"))
			}
		})
	}
	resp, b := rpcDo(t, o.URL, "HEAD", "")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || len(b) != 0 {
		t.Errorf("HEAD: %d %q %q", resp.StatusCode, resp.Header.Get("Allow"), b)
	}
	edgetest.LoadContract(t).RequireSeen(t, "POST /api/mcp 400", "POST /api/mcp 403", "POST /api/mcp 404", "PUT /api/mcp 405",
		"POST /api/mcp 406", "POST /api/mcp 413", "POST /api/mcp 415", "POST /api/mcp 200")
}

// JSON-RPC batches exist only before 2025-06-18; there they are capped at 16
// messages and 256 KiB of answers, so a small POST cannot draw megabytes.
func TestMCPBatches(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	calls := func(n int, method string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s"}`, i+1, method)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	type answer struct {
		ID     float64         `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// The batch attack: 1,000 tools/list in 55 KB drew 21 MB
	// (docs/benchmarks.md, "MCP transport limits").
	attack := calls(1000, "tools/list")
	resp, b := rpcDo(t, o.URL, "POST", attack)
	if resp.StatusCode != 400 || len(b) > 1024 || parseRPCError(t, b).Code != -32600 {
		t.Errorf("1,000-call batch: %d, %d bytes for a %d-byte request", resp.StatusCode, len(b), len(attack))
	}
	for _, version := range []string{"", "2025-03-26", "2024-11-05"} {
		resp, b := rpcDo(t, o.URL, "POST", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "MCP-Protocol-Version", version)
		var got []answer
		if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || len(got) != 2 || got[0].Result == nil || got[1].Result == nil {
			t.Errorf("batch under %q: %d %.300s", version, resp.StatusCode, b)
		}
	}
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		resp, b := rpcDo(t, o.URL, "POST", calls(2, "ping"), "MCP-Protocol-Version", version)
		if resp.StatusCode != 400 || !strings.Contains(parseRPCError(t, b).Message, "2025-06-18") {
			t.Errorf("batch under %s: %d %s", version, resp.StatusCode, b)
		}
	}
	// 16 tools/list would answer about 336 KB: the answers past 256 KiB are withheld, each with an error for its id.
	body := calls(16, "tools/list")
	resp, b = rpcDo(t, o.URL, "POST", body)
	var got []answer
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || len(got) != 16 {
		t.Fatalf("16-call batch: %d %.300s", resp.StatusCode, b)
	}
	if len(b) > mcpserver.MaxBatchResponseBytes+16*512 {
		t.Errorf("16-call batch answered %d bytes, over the %d budget", len(b), mcpserver.MaxBatchResponseBytes)
	}
	ids, results, withheld := map[float64]bool{}, 0, 0
	for _, a := range got {
		ids[a.ID] = true
		switch {
		case a.Result != nil:
			results++
		case a.Error != nil && a.Error.Code == -32000 && strings.Contains(a.Error.Message, "on its own"):
			withheld++
		default:
			t.Errorf("answer %v is neither a result nor a withheld-answer error", a.ID)
		}
	}
	if len(ids) != 16 || results == 0 || withheld == 0 {
		t.Errorf("16-call batch: %d distinct ids, %d results, %d withheld", len(ids), results, withheld)
	}
	t.Logf("16 tools/list: %d-byte request, %d-byte answer (%d results, %d withheld)", len(body), len(b), results, withheld)
	// Notifications only: accepted, nothing to answer.
	resp, b = rpcDo(t, o.URL, "POST", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if resp.StatusCode != 202 || len(b) != 0 {
		t.Errorf("notification batch: %d %q", resp.StatusCode, b)
	}
}

// initialize, server/discover and the server card advertise the same
// capabilities and protocol versions, from one definition in mcpserver.
func TestMCPCapabilitiesAgree(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	want, _ := json.Marshal(mcpserver.Capabilities())
	if strings.Contains(string(want), `"listChanged":true`) {
		t.Errorf("a stateless server cannot notify list changes: %s", want)
	}
	_, b := get(t, o.URL+"/.well-known/mcp.json")
	var card struct {
		Capabilities json.RawMessage `json:"capabilities"`
		Remotes      []struct {
			Versions []string `json:"supportedProtocolVersions"`
		} `json:"remotes"`
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(b, &card); err != nil || len(card.Remotes) != 1 {
		t.Fatalf("card: %v", err)
	}
	if !jsonEqual(string(card.Capabilities), string(want)) {
		t.Errorf("card capabilities %s, want %s", card.Capabilities, want)
	}
	if !reflect.DeepEqual(card.Remotes[0].Versions, mcpserver.ProtocolVersions) || card.ProtocolVersion != mcpserver.ProtocolVersions[0] {
		t.Errorf("card versions %v %s", card.Remotes[0].Versions, card.ProtocolVersion)
	}
	capsOf := func(resp *http.Response, b []byte) string {
		var m struct {
			Result struct {
				Capabilities    json.RawMessage `json:"capabilities"`
				ProtocolVersion string          `json:"protocolVersion"`
			} `json:"result"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &m) != nil || m.Result.Capabilities == nil {
			t.Fatalf("%d %.300s", resp.StatusCode, b)
		}
		return string(m.Result.Capabilities)
	}
	for _, v := range mcpserver.ProtocolVersions[1:] {
		resp, b := rpcDo(t, o.URL, "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if got := capsOf(resp, b); !jsonEqual(got, string(want)) {
			t.Errorf("initialize %s capabilities %s, want %s", v, got, want)
		}
		if !strings.Contains(string(b), `"protocolVersion":"`+v+`"`) {
			t.Errorf("initialize %s was not answered with %s: %.200s", v, v, b)
		}
	}
	resp, b := rpcDo(t, o.URL, "POST", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
	if got := capsOf(resp, b); !jsonEqual(got, string(want)) {
		t.Errorf("server/discover capabilities %s, want %s", got, want)
	}
}
