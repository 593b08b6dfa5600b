package checks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

func decodeSchema(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestMCPToolSchemaProblems(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   []string // each a substring of one problem, in order; none: valid
	}{
		{`{"type":"object"}`, nil},
		{`{"type":"object","properties":{}}`, nil},
		{`{"type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":["integer","null"]},"any":true},"required":["q"]}`, nil},
		{`{"type":"object","properties":{"p":{"type":"object","properties":{"w":{"type":"integer"}},"required":["w"]},"l":{"type":"array","items":{"type":"number"}}},"additionalProperties":false}`, nil},
		{`{"type":"object","properties":{"k":{"anyOf":[{"type":"string"},{"type":"null"}]},"e":{"enum":["a","b"]}},"$defs":{"x":{"type":"string"}}}`, nil},
		{`null`, []string{"no inputSchema"}},
		{`"object"`, []string{"inputSchema is a string, not a JSON Schema object"}},
		{`[]`, []string{"inputSchema is a list"}},
		{`{}`, []string{`has no "type": "object"`}},
		{`{"type":"array","items":{"type":"string"}}`, []string{`inputSchema has type "array", not "object"`}},
		{`{"type":["object"]}`, []string{`type is not the string "object"`}},
		{`{"type":"object","properties":[]}`, []string{"properties that are a list, not an object of schemas"}},
		{`{"type":"object","properties":{"a":"text"}}`, []string{`property "a" is a string, not a schema`}},
		{`{"type":"object","properties":{"a":{"type":"int"}}}`, []string{`property "a" has type "int", which is not a JSON Schema type`}},
		{`{"type":"object","properties":{"a":{"type":[]}}}`, []string{`property "a" has an empty type list`}},
		{`{"type":"object","properties":{"a":{"type":["string",3]}}}`, []string{`property "a" lists a number as a type`}},
		{`{"type":"object","properties":{"a":{"type":5}}}`, []string{`property "a" has a type that is a number`}},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`, []string{`inputSchema requires "b", which is not among its properties`}},
		{`{"type":"object","required":["id"]}`, []string{`inputSchema requires "id"`}},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":"a"}`, []string{"required that is a string, not a list of property names"}},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":[1]}`, []string{"lists a number in required"}},
		{`{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"string"}},"required":["y"]}}}`, []string{`property "p" requires "y"`}},
		{`{"type":"object","properties":{"l":{"type":"array","items":"string"}}}`, []string{`property "l"'s items is a string, not a schema`}},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"strng"}}}}`, []string{`property "l[]" has type "strng"`}},
		{`{"type":"object","additionalProperties":"no"}`, []string{"additionalProperties is a string"}},
		{`{"type":"object","properties":{"k":{"anyOf":[]}}}`, []string{"anyOf that is not a non-empty list of schemas"}},
		{`{"type":"object","properties":{"k":{"oneOf":[1]}}}`, []string{"oneOf[0] is a number"}},
		{`{"type":"object","properties":{"e":{"enum":"a"}}}`, []string{"enum that is a string, not a list"}},
		{`{"type":"object","description":5,"properties":{"a":{"type":"string","$ref":7}}}`, []string{"property \"a\" has a $ref that is a number", "inputSchema has a description that is a number"}},
		{`{"type":"object","$defs":[]}`, []string{"$defs that is a list"}},
		{`{"type":"string","properties":{"a":{"type":"bad"}},"required":["z"]}`, []string{`type "string"`, `"a" has type "bad"`, `requires "z"`}},
	} {
		got := mcpToolSchemaProblems(decodeSchema(t, tc.schema))
		if len(got) != len(tc.want) {
			t.Errorf("%s: problems %q, want %d", tc.schema, got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q lacks %q", tc.schema, got[i], w)
			}
		}
	}
}

// A hostile schema costs a bounded walk and a bounded list of problems.
func TestMCPToolSchemaBounds(t *testing.T) {
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 500) + `{}` + strings.Repeat(`}}`, 500) + `}}`
	got := mcpToolSchemaProblems(decodeSchema(t, deep))
	if len(got) != 1 || !strings.Contains(got[0], "too large or too deep") {
		t.Errorf("deep: %q", got)
	}
	var props []string
	for i := range 5000 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"nope"}`, i))
	}
	wide := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	got = mcpToolSchemaProblems(decodeSchema(t, wide))
	if len(got) != mcpMaxToolProblems {
		t.Errorf("wide: %d problems", len(got))
	}
	long := strings.Repeat("x", 500) + "\n\x00"
	got = mcpToolSchemaProblems(map[string]any{"type": long})
	if len(got) != 1 || len(got[0]) > 120 || strings.ContainsAny(got[0], "\n\x00") {
		t.Errorf("long: %q", got)
	}
}

func FuzzMCPToolSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"type":"object","properties":{"a":{"anyOf":[{"items":[true,{}]}]}},"$defs":{"x":{"not":{}}}}`, `[1,"a",null]`, `"x"`, `{"type":["object",1],"required":[2,"q"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		got := mcpToolSchemaProblems(v)
		if len(got) > mcpMaxToolProblems {
			t.Fatalf("%d problems", len(got))
		}
		for _, p := range got {
			if p == "" || strings.ContainsAny(p, "\n\r\x00") {
				t.Fatalf("problem %q", p)
			}
		}
	})
}

// judgeLive runs the mcp.live probe over a hand-made artifact.
func judgeLive(t *testing.T, doc *gather.MCPLiveDoc) report.DeepProbe {
	t.Helper()
	set := gather.NewSet(gather.Site{})
	gather.Put(set, gather.MCPLive, doc)
	for _, p := range Deep() {
		if p.ID == "mcp.live" {
			return p.Judge(set)
		}
	}
	t.Fatal("mcp.live is not registered")
	return report.DeepProbe{}
}

func goodEndpoint(url string) gather.MCPLiveEndpoint {
	return gather.MCPLiveEndpoint{URL: url, Era: "modern", ProtocolVersion: "2026-07-28", HandshakeMS: 12,
		Calls: []gather.MCPCall{{Method: "server/discover", HTTPStatus: 200, MS: 12, Outcome: "result"}, {Method: "tools/list", HTTPStatus: 200, MS: 3, Outcome: "result"}},
		Lists: []gather.MCPList{
			{Kind: "tools", Offered: true, Tried: true, Pages: 1, Items: 1},
			{Kind: "resources", Offered: true, Tried: true, Pages: 1, Items: 2},
			{Kind: "prompts"},
		},
		Tools: []gather.MCPLiveTool{{Name: "find", InputSchema: map[string]any{"type": "object"}}}}
}

func TestMCPLiveProbeVerdicts(t *testing.T) {
	const card = "https://s.example/.well-known/mcp/server-card"
	legacy := goodEndpoint("https://s.example/mcp")
	legacy.Era, legacy.ProtocolVersion, legacy.ModernFailure = "legacy", "2025-06-18", "server/discover got HTTP 404"
	broken := gather.MCPLiveEndpoint{URL: "https://s.example/mcp2", Failure: "server/discover got HTTP 500; initialize got HTTP 500", ModernFailure: "server/discover got HTTP 500"}
	badSchemas := goodEndpoint("https://s.example/mcp")
	for i := range 30 {
		badSchemas.Tools = append(badSchemas.Tools, gather.MCPLiveTool{Name: fmt.Sprintf("t%d\n", i), InputSchema: map[string]any{"type": "string"}})
	}
	failingList := goodEndpoint("https://s.example/mcp")
	failingList.Lists[1].Failure = "resources/list (page 2) got HTTP 502"
	dropped := goodEndpoint("https://s.example/mcp")
	dropped.ToolsDropped, dropped.ToolsUndeclared = 2, true
	empty := goodEndpoint("https://s.example/mcp")
	empty.Lists, empty.Tools = []gather.MCPList{{Kind: "tools"}, {Kind: "resources"}, {Kind: "prompts"}}, nil
	capped := goodEndpoint("https://s.example/mcp")
	capped.Lists[0].Pages, capped.Lists[0].Items, capped.Lists[0].Capped = 5, 200, true

	for name, tc := range map[string]struct {
		doc      *gather.MCPLiveDoc
		status   report.Status
		contains []string
		lacks    []string
	}{
		"no card": {&gather.MCPLiveDoc{}, report.NA, []string{"No MCP endpoint is declared", "/.well-known/mcp.json"}, nil},
		"unreadable card": {&gather.MCPLiveDoc{CardURL: card, CardErr: "not a JSON object: the document is empty"}, report.NA,
			[]string{"could not be read (not a JSON object", card}, nil},
		"card without endpoints": {&gather.MCPLiveDoc{CardURL: card}, report.NA, []string{"names no Streamable HTTP endpoint"}, nil},
		"cross-site only": {&gather.MCPLiveDoc{CardURL: card, CrossSite: []string{"https://o.example/mcp", "https://p.example/mcp"}}, report.NA,
			[]string{"declares no endpoint on this site", "Skipped 2 declared endpoints on another site (https://o.example/mcp, https://p.example/mcp)"}, nil},
		"modern": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{goodEndpoint("https://s.example/mcp")}}, report.Pass,
			[]string{"modern stateless protocol (2026-07-28)", "in 12 ms", "It lists 1 tool and 2 resources.", "Every tool's inputSchema is valid."}, []string{"prompts", "Skipped"}},
		"legacy": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{legacy}}, report.Pass,
			[]string{"only the legacy initialize handshake (2025-06-18, 12 ms); server/discover got HTTP 404."}, nil},
		"one of two broken": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{goodEndpoint("https://s.example/mcp"), broken}, NotTried: 1}, report.Partial,
			[]string{"https://s.example/mcp2 could not be used: server/discover got HTTP 500; initialize got HTTP 500.", "answer a POSTed JSON-RPC request", "1 further endpoint beyond the first 2 were not tried"}, nil},
		"broken": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{broken}}, report.Fail,
			[]string{"could not be used", "server/discover for the stateless 2026-07-28 protocol"}, []string{"It lists"}},
		"bad schemas": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{badSchemas}}, report.Partial,
			[]string{`30 of 31 tools have an invalid inputSchema (first: tool "t0\n": inputSchema has type "string", not "object")`, `"type": "object"`}, []string{"Every tool"}},
		"failing list": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{failingList}}, report.Partial,
			[]string{"It lists 1 tool.", "Problems: resources/list (page 2) got HTTP 502.", "Answer every list the capabilities declare"}, nil},
		"dropped and undeclared": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{dropped}}, report.Partial,
			[]string{"2 tools in its tools/list answers the official Go SDK client drops", "without declaring the tools capability", "x-mcp-header", "Declare the tools capability"}, nil},
		"offers nothing": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{empty}}, report.Pass,
			[]string{"It offers no tools, resources or prompts."}, []string{"Every tool"}},
		"capped": {&gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{capped}}, report.Pass,
			[]string{"200 tools (the first 5 pages; more follow)"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := judgeLive(t, tc.doc)
			if got.Status != tc.status {
				t.Errorf("status %s (%s), want %s", got.Status, got.Message, tc.status)
			}
			for _, w := range tc.contains {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			for _, w := range tc.lacks {
				if strings.Contains(got.Message, w) {
					t.Errorf("message %q has %q", got.Message, w)
				}
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("details do not marshal: %v", err)
			}
		})
	}

	// The details list the first 20 schema problems, and every call with its latency.
	got := judgeLive(t, &gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{badSchemas}})
	if ps := got.Details["schemaProblems"].([]string); len(ps) != mcpMaxSchemaProblems || !strings.HasPrefix(ps[0], `tool "t0\n"`) {
		t.Errorf("schema problems %q", ps)
	}
	ep := got.Details["endpoints"].([]map[string]any)[0]
	if calls := ep["calls"].([]map[string]any); len(calls) != 2 || calls[0]["ms"] != int64(12) || calls[0]["method"] != "server/discover" {
		t.Errorf("calls %v", calls)
	}
	if ep["toolsInvalid"] != 30 {
		t.Errorf("toolsInvalid %v", ep["toolsInvalid"])
	}
}

// An endpoint that asked for a token and took the scan's says so; one that
// asked and got none says why, and its fix is about getting a token, not
// about speaking JSON-RPC.
func TestMCPLiveProbeAuthorization(t *testing.T) {
	const card = "https://s.example/.well-known/mcp/server-card"
	authed := goodEndpoint("https://s.example/mcp")
	authed.AuthIssuer = "https://s.example"
	got := judgeLive(t, &gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{authed}})
	if got.Status != report.Pass || !strings.Contains(got.Message, "accepted the deep scan's, from the authorization server https://s.example") {
		t.Errorf("authorized endpoint: %s: %s", got.Status, got.Message)
	}
	if eps := got.Details["endpoints"].([]map[string]any); eps[0]["authorizedBy"] != "https://s.example" {
		t.Errorf("details %v", eps[0])
	}

	refused := gather.MCPLiveEndpoint{URL: "https://s.example/mcp", Failure: "server/discover got HTTP 401; initialize got HTTP 401",
		AuthNote: "its protected-resource metadata (https://s.example/.well-known/oauth-protected-resource/mcp) does not list the authorization server https://s.example"}
	got = judgeLive(t, &gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{refused}})
	for _, w := range []string{"initialize got HTTP 401", "It asks for credentials (HTTP 401), and its protected-resource metadata", "let agents get one"} {
		if !strings.Contains(got.Message, w) {
			t.Errorf("message %q lacks %q", got.Message, w)
		}
	}
	if got.Status != report.Fail || strings.Contains(got.Message, mcpFixConnect) {
		t.Errorf("%s: %s", got.Status, got.Message)
	}

	rejected := gather.MCPLiveEndpoint{URL: "https://s.example/mcp", Failure: "initialize got HTTP 401", AuthIssuer: "https://s.example"}
	got = judgeLive(t, &gather.MCPLiveDoc{CardURL: card, Endpoints: []gather.MCPLiveEndpoint{rejected}})
	if got.Status != report.Fail || !strings.Contains(got.Message, "was sent the deep scan's, from the authorization server https://s.example") || !strings.Contains(got.Message, "audience and scope") {
		t.Errorf("token refused: %s: %s", got.Status, got.Message)
	}
}
