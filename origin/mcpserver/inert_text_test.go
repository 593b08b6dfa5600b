package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
)

var (
	elementRe  = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)
	autolinkRe = regexp.MustCompile(`^<a href="([^"]*)">([^<]*)</a>`)
)

// A tool result's text is the structured content's JSON, and its strings
// carry the titles testdata/sites/markup chose: a markdown link and image,
// <img onerror>, <script>, an autolink, a reference-style definition, HTML
// entities, backticks and U+202E. The text decodes to the same value, yet
// rendered as CommonMark it makes no link, image, code span or HTML element,
// and as GFM no link but a bare URL shown as itself; the bidi and zero-width
// characters are \u escapes. Real scan of the fixture over loopback, the
// tool called by the MCP Go client over HTTP.
func TestToolTextIsInertMarkdown(t *testing.T) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	s, err := New(Deps{
		ValidateURL: func(raw string) (string, error) { return raw, nil },
		Scan:        func(ctx context.Context, u string) (*report.Result, error) { return sc.Scan(ctx, u, nil) },
		Fetch:       func(context.Context, string, string) (*engine.Document, error) { return nil, context.Canceled },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", "markup"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scan_url", Arguments: map[string]any{"url": site.URL}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("scan_url: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	structured, _ := json.Marshal(res.StructuredContent)
	var fromText, fromStructured any
	if json.Unmarshal([]byte(text), &fromText) != nil || json.Unmarshal(structured, &fromStructured) != nil || !reflect.DeepEqual(fromText, fromStructured) {
		t.Fatalf("the text is not the structured content's JSON:\n text       %.500s\n structured %.500s", text, structured)
	}
	// The site's strings are all there, as the site wrote them.
	var strs strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			strs.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(fromStructured)
	for _, title := range []string{"[click](https://attacker.example)", "![x](https://attacker.example/p.png)", "<img src=x onerror=alert(1)>",
		"<script>alert(1)</script>", "<https://attacker.example>", "&lt;script&gt;", "`</code>`", "[a]: https://attacker.example", "Acme Agent \u202Egnp.exe"} {
		if !strings.Contains(strs.String(), title) {
			t.Errorf("the report does not carry the site's %q: the fixture no longer tests it", title)
		}
	}
	if strings.ContainsAny(text, "\u202E\u202C\u200B\uFEFF`<>&") || !strings.Contains(text, `\u202E`) {
		t.Errorf("the text has a raw bidi or zero-width character, a backtick, < > or &, or no \\u202E escape: %.2000s", text)
	}

	for name, md := range map[string]goldmark.Markdown{
		"commonmark": goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe())),
		"gfm":        goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe())),
	} {
		var buf bytes.Buffer
		if err := md.Convert([]byte(text), &buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, m := range elementRe.FindAllStringSubmatchIndex(out, -1) {
			tag := out[m[4]:m[5]]
			switch {
			case tag == "p" || tag == "em" || tag == "strong" || tag == "del":
			case tag == "a" && name == "gfm" && out[m[2]:m[3]] == "":
				// A bare URL GFM autolinks shows where it goes.
				link := autolinkRe.FindStringSubmatch(out[m[0]:])
				if link == nil || (html.UnescapeString(link[1]) != html.UnescapeString(link[2]) && html.UnescapeString(link[1]) != "http://"+html.UnescapeString(link[2])) {
					t.Errorf("%s: a link that is not its own text: %.200s", name, out[m[0]:])
				}
			case tag == "a" && name == "gfm":
			default:
				t.Errorf("%s: the text renders <%s%s>: %.200s", name, tag, out[m[6]:m[7]], out[m[0]:])
			}
		}
	}
}
