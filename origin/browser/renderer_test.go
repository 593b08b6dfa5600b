package browser

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/fixture"
)

func fixtureSite(t *testing.T, name string) *fixture.Site {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "..", "testdata", "sites", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func renderScan(t *testing.T, p *Pool) *engine.Scanner {
	t.Helper()
	return engine.New(engine.Options{Deadline: 30 * time.Second, Renderer: p.Renderer(),
		Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
}

// The spa fixture builds its page in script: with real Chromium the
// rendered block reports the words, headings, links and JSON-LD that only
// exist after rendering, while the checks keep failing on the server HTML.
func TestRenderedDiffSPA(t *testing.T) {
	p := newTestPool(t, Config{Tabs: 1})
	site := fixtureSite(t, "spa")
	res, err := renderScan(t, p).Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rendered
	if r == nil || r.Error != "" {
		t.Fatalf("rendered block: %+v", r)
	}
	if r.WordsOnlyRendered < 30 || !strings.Contains(r.MissedText, "configurable widgets") {
		t.Errorf("words only after rendering: %d %q", r.WordsOnlyRendered, r.MissedText)
	}
	for _, h := range []string{"h1: Acme Widgets for busy teams", "h2: Why teams choose Acme"} {
		if !slices.Contains(r.Headings, h) {
			t.Errorf("heading %q missing from %q", h, r.Headings)
		}
	}
	if !slices.Contains(r.Links, site.URL+"/docs/api") || !slices.Contains(r.Links, site.URL+"/pricing") {
		t.Errorf("links only after rendering: %q", r.Links)
	}
	if r.ServerJSONLD != 0 || r.RenderedJSONLD != 1 || !slices.Equal(r.JSONLDTypes, []string{"Organization"}) {
		t.Errorf("JSON-LD %d → %d %q", r.ServerJSONLD, r.RenderedJSONLD, r.JSONLDTypes)
	}
	if c, _ := res.Check("4.12"); c.Status != "fail" {
		t.Errorf("4.12 is %s with a renderer: the checks judge the server HTML", c.Status)
	}
}

// The webmcp-runtime fixture registers its tools from fetched data: only a
// browser running the page observes them, through every registration API.
func TestRenderedRuntimeTools(t *testing.T) {
	p := newTestPool(t, Config{Tabs: 1})
	site := fixtureSite(t, "webmcp-runtime")
	res, err := renderScan(t, p).Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := res.Check("1.18"); c.Status != "fail" {
		t.Errorf("1.18 WebMCP is %s: the server HTML names no tool", c.Status)
	}
	r := res.Rendered
	if r == nil || r.Error != "" {
		t.Fatalf("rendered block: %+v", r)
	}
	got := map[string]string{}
	for _, tool := range r.Tools {
		got[tool.Name] = tool.API
	}
	want := map[string]string{
		"search_catalogue": "navigator.modelContext.registerTool",
		"add_to_cart":      "navigator.modelContext.registerTool",
		"view_cart":        "navigator.modelContext.provideContext",
	}
	for name, api := range want {
		if got[name] != api {
			t.Errorf("tool %s: observed via %q, want %q (all: %+v)", name, got[name], api, r.Tools)
		}
	}
}

// Without Chromium the renderer's error reaches the report, and the scan
// itself still succeeds.
func TestRendererUnavailable(t *testing.T) {
	p := New(Config{ExecPath: "/nonexistent/chromium", Check: onlyFixture})
	defer p.Close()
	site := fixtureSite(t, "spa")
	res, err := renderScan(t, p).Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rendered == nil || !strings.Contains(res.Rendered.Error, "CHROME_PATH") {
		t.Fatalf("rendered block without Chromium: %+v", res.Rendered)
	}
}
