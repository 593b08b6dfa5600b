package mcpcard

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/mcp/" // fuzz seeds only; tests use testenv.Shared

// Every card and registry document in the corpus has its row: what the
// parser must extract (name, the resolved endpoints, how many tools) and one
// finding it must report, so a lenient parser cannot silently drop what
// matters. Cards are resolved against a site's card URL, as the scanner does.
func TestCorpus(t *testing.T) {
	cases := map[string]struct {
		name     string
		endpoint string // "" when none is valid
		tools    int
		finding  string
	}{
		"registry-with-remote.json":   {"io.github.user/remote-weather", "", 0, "is a template"},
		"registry-minimal.json":       {"io.github.user/weather", "", 0, "no Streamable HTTP endpoint"},
		"registry-missing-name.json":  {"", "", 0, "no `name`"},
		"publisher-template-mcp.json": {"io.github.<owner>/<server-name>", "", 0, "no Streamable HTTP endpoint"},
		"vscode-mcp.json":             {"", "", 0, "no `name`"}, // a client config, not a server card
		// legacy transport object; capabilities as {tools: {supported: true}}
		"adrianub-server-card.json": {"adrianub-web-tools", "https://adrianub.dev/mcp", 0, ""},
		// only name, description, version and tools without inputSchema
		"alderpost-server-card.json": {"alderpost-mcp", "", 8, "no Streamable HTTP endpoint"},
		// registry server.json with packages and a streamable-http remote
		"github-mcp-server.json": {"io.github.github/github-mcp-server", "https://api.githubcopilot.com/mcp/", 0, ""},
		// flat pointer document: `url` and `transport` as a string
		"laisky-mcp-discovery.json": {"laisky-mcp", "https://mcp.laisky.com", 0, ""},
		// flat card: `transport` a string, capabilities as booleans, two tools
		"laisky-server-card.json": {"laisky-mcp", "https://mcp.laisky.com", 2, ""},
		// mcpServers map: one remote (kept), one stdio package (no endpoint)
		"lamatic-mcp-discovery.json": {"Lamatic.ai", "https://docmcp.lamatic.ai/api/mcp", 0, ""},
		// relative endpoint; tools, resources and prompts are ["dynamic"]
		"qdrant-fork-server-card.json": {"mcp-server-qdrant", "https://example.com/mcp", 0, "by name only"},
		"registry-with-package.json":   {"io.github.user/local-weather", "", 0, "no Streamable HTTP endpoint"},
		// the registry's "invalid" example (package version "latest")
		"registry-package-version-latest.json": {"io.github.user/bad-version", "", 0, "no Streamable HTTP endpoint"},
		// top-level `endpoint`, capabilities.tools holds a description string
		"scalekit-server-card.json": {"Scalekit MCP Server", "https://mcp.scalekit.com/", 0, ""},
	}
	base, _ := url.Parse("https://example.com/.well-known/mcp/server-card.json")
	files, _ := filepath.Glob(testenv.Shared(t, "corpus/mcp") + "/*.json")
	if len(files) != len(cases) {
		t.Fatalf("corpus %d files, table %d", len(files), len(cases))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, err := Parse(b, base)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w, ok := cases[filepath.Base(f)]
		if !ok {
			t.Errorf("%s has no row", filepath.Base(f))
			continue
		}
		ep := ""
		if len(c.Endpoints) > 0 {
			ep = c.Endpoints[0]
		}
		if c.Name != w.name || ep != w.endpoint || c.Valid() != (w.name != "" && w.endpoint != "") ||
			len(c.Tools) != w.tools || !strings.Contains(strings.Join(c.Findings, "|"), w.finding) {
			t.Errorf("%s: %+v tools=%d", filepath.Base(f), c, len(c.Tools))
		}
	}
}

// A member of an unexpected type that no rule reads is a note, never a
// rejection, and no message carries encoding/json's words.
func TestToleratesStrayMembers(t *testing.T) {
	c, err := Parse([]byte(`{"name":"x","url":"https://a.example/mcp","capabilities":["tools","resources"],
		"tools":[{"name":"search","description":"Search the catalogue by keyword."},"other",42]}`), nil)
	if err != nil || !c.Valid() || len(c.Tools) != 2 {
		t.Fatalf("card with an array of capabilities: %+v %v", c, err)
	}
	notes := strings.Join(c.Findings, "|")
	if !strings.Contains(notes, "`capabilities` is not an object") || !strings.Contains(notes, "neither tool objects nor names") {
		t.Errorf("notes: %q", notes)
	}
	_, err = Parse([]byte("{\"name\": \"x\",}"), nil)
	if err == nil || strings.Contains(err.Error(), "invalid character") || !strings.Contains(err.Error(), "trailing comma") {
		t.Errorf("syntax error in plain words: %v", err)
	}
}

func TestShapes(t *testing.T) {
	base, _ := url.Parse("https://example.com/.well-known/mcp.json")
	legacy, _ := Parse([]byte(`{"serverInfo":{"name":"x"},"transport":{"type":"streamable-http","endpoint":"/mcp"},"tools":[{"name":"a"}]}`), base)
	if legacy.Shape != "legacy" || !legacy.Valid() || legacy.Endpoints[0] != "https://example.com/mcp" || len(legacy.Tools) != 1 {
		t.Errorf("legacy: %+v", legacy)
	}
	card, _ := Parse([]byte(`{"name":"com.example/x","remotes":[{"type":"sse","url":"https://example.com/sse"},{"type":"streamable-http","url":"https://example.com/mcp"}]}`), base)
	if card.Shape != "server-card" || len(card.Endpoints) != 1 || len(card.Findings) != 1 {
		t.Errorf("server card: %+v", card)
	}
}

func TestGrade(t *testing.T) {
	good := Tool{Name: "search_docs", Description: "Search the documentation by keyword and return matching pages.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "description": "Keywords"}}}}
	if ok, why := Grade(good); !ok {
		t.Errorf("good tool graded down: %v", why)
	}
	cases := map[string]Tool{
		"name must be":         {Name: "bad name!", Description: good.Description, InputSchema: good.InputSchema},
		"shorter than 20":      {Name: "a", Description: "Does a.", InputSchema: good.InputSchema},
		"only repeats":         {Name: "get_weather_forecast_data", Description: "Get weather forecast data", InputSchema: good.InputSchema},
		"no inputSchema":       {Name: "a", Description: good.Description},
		"not an object schema": {Name: "a", Description: good.Description, InputSchema: map[string]any{"type": "string"}},
		"lacks a type or":      {Name: "a", Description: good.Description, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
	}
	for want, tool := range cases {
		ok, why := Grade(tool)
		if ok || !strings.Contains(strings.Join(why, "|"), want) {
			t.Errorf("%q: ok=%v why=%v", want, ok, why)
		}
	}
}

func TestReadReply(t *testing.T) {
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n data: \"result\":{\"tools\":[{\"name\":\"t\"}]}}\n\n"
	sse = strings.Replace(sse, "\n data: ", "\ndata: ", 1)
	r, err := ReadReply("text/event-stream", []byte(sse))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(r.Result)
	if err != nil || len(tools) != 1 || tools[0].Name != "t" {
		t.Errorf("tools %+v %v", tools, err)
	}
	if _, err := ReadReply("application/json", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`)); err != nil {
		t.Errorf("an error reply is a reply: %v", err)
	}
	if _, err := ReadReply("application/json", []byte(`{"ok":true}`)); err != ErrNoReply {
		t.Errorf("non-JSON-RPC body: %v", err)
	}
}

// ReadReply holds MCP and A2A replies to the letter of JSON-RPC 2.0, and
// Answers ties a reply to its request.
func TestReadReplyStrict(t *testing.T) {
	cases := []struct {
		ct, body string
		ok       bool
		answers1 bool
	}{
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, true, true},
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":null}`, true, true}, // a null result is a result
		{"application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, true, true},
		{"application/json", `{"jsonrpc":"2.0","id":2,"result":{}}`, true, false},
		{"application/json", `{"jsonrpc":"2.0","id":null,"result":{}}`, true, false},
		{"application/json; charset=utf-8", " \n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}` + "\n", true, true},
		{"application/json", `{"jsonrpc":"1.0","id":1,"result":{}}`, false, false},
		{"application/json", `{"id":1,"result":{}}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","result":{}}`, false, false}, // no id
		{"application/json", `{"jsonrpc":"2.0","id":1}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":1e30,"message":"x"}}`, false, false},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, false, false},
		{"application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, false, false},
		{"text/html", `<!doctype html><h1>Not found</h1>`, false, false},
		// The first event holding a reply, after a server request and a
		// notification; data lines of one event join.
		{"text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n", true, true},
		{"text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", true, true}, // no final blank line
		{"text/event-stream", ": keep-alive\n\n", false, false},
	}
	for _, c := range cases {
		r, err := ReadReply(c.ct, []byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s %q: err %v, want ok=%v", c.ct, c.body, err, c.ok)
			continue
		}
		if err == nil && ((r.Result == nil) == (r.Error == nil) || r.Answers(1) != c.answers1) {
			t.Errorf("%s %q: %+v, answers 1 = %v", c.ct, c.body, r, r.Answers(1))
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "application/json")
		}
	}
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), "text/event-stream")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		if c, err := Parse(body, nil); err == nil {
			for _, tool := range c.Tools {
				Grade(tool)
			}
		}
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			if d, _ := ReadToolDef(m); d.Valid() && (!ValidToolName(d.Ecosystem, d.Name) || strings.TrimSpace(d.Description) == "") {
				t.Fatalf("invalid tool accepted: %+v", d)
			}
		}
		if r, err := ReadReply(ct, body); err == nil && (r.Result == nil) == (r.Error == nil) {
			t.Fatalf("a reply with both or neither of result and error accepted: %+v", r)
		}
	})
}
