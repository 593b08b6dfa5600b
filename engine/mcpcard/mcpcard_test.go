package mcpcard

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpus = "../../../shared/corpus/mcp/"

func TestCorpus(t *testing.T) {
	cases := map[string]struct {
		name    string
		valid   bool
		finding string
	}{
		"registry-with-remote.json":   {"io.github.user/remote-weather", false, "is a template"},
		"registry-minimal.json":       {"io.github.user/weather", false, "no Streamable HTTP endpoint"},
		"registry-missing-name.json":  {"", false, "no `name`"},
		"publisher-template-mcp.json": {"io.github.<owner>/<server-name>", false, "no Streamable HTTP endpoint"},
		"vscode-mcp.json":             {"", false, "no `name`"}, // a client config, not a server card
	}
	files, _ := filepath.Glob(corpus + "*.json")
	if len(files) != len(cases) {
		t.Fatalf("corpus %d files, table %d", len(files), len(cases))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, err := Parse(b, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w := cases[filepath.Base(f)]
		if c.Name != w.name || c.Valid() != w.valid || !strings.Contains(strings.Join(c.Findings, "|"), w.finding) {
			t.Errorf("%s: %+v", filepath.Base(f), c)
		}
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
		if r, err := ReadReply(ct, body); err == nil && r.Result == nil && r.Error == nil {
			t.Fatal("empty reply accepted")
		}
	})
}
