package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
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
		Fetch: fetch.Config{Policy: loopback.Policy()}})
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

// browserFixture serves a page of testdata/browser (pages whose browser
// behaviour the tests exercise).
func browserFixture(t *testing.T, name string) *fixture.Site {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "..", "testdata", "browser", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A console error says where it came from, clipped for a report: a path on
// the page's own origin, host and path elsewhere, never a query, fragment or
// user name, and nothing of a data: URL but its scheme.
func TestConsoleSource(t *testing.T) {
	page, _ := url.Parse("https://shop.example/products/")
	long := "/assets/" + strings.Repeat("chunk-", 30) + ".js"
	for _, c := range []struct {
		raw  string
		line int
		want string
	}{
		{"https://shop.example/img/a.png?token=s3cr3t#frag", 0, "/img/a.png"},
		{"https://shop.example", 0, "/"},
		{"https://shop.example/app.js", 12, "/app.js:12"},
		{"https://cdn.example.net/lib/x.js?v=1&key=abc", 3, "cdn.example.net/lib/x.js:3"},
		{"http://shop.example/a.png", 0, "shop.example/a.png"},            // another scheme is another origin
		{"https://shop.example:8443/a.png", 0, "shop.example:8443/a.png"}, // so is another port
		{"https://user:pass@cdn.example.net/x.css", 0, "cdn.example.net/x.css"},
		{"data:image/png;base64,iVBORw0KGgo=", 0, "data:"},
		{"blob:https://shop.example/5d3c", 0, "blob:"},
		{"", 4, ""},
		{"not a url", 0, ""},
		{"https://shop.example" + long + "?q=1", 7, clip.To(long, maxSourceRunes) + ":7"},
	} {
		got := consoleSource(c.raw, c.line, page)
		if got != c.want {
			t.Errorf("consoleSource(%q, %d) = %q, want %q", c.raw, c.line, got, c.want)
		}
		if utf8.RuneCountInString(strings.TrimSuffix(got, ":7")) > maxSourceRunes {
			t.Errorf("consoleSource(%q) is %d runes long", c.raw, utf8.RuneCountInString(got))
		}
	}
	if got := consoleLine(ConsoleMessage{Kind: "network", Text: "Failed to load resource: the server responded with a status of 404 (Not Found)", URL: "https://shop.example/x.png?sid=1"}, page); got != "network: Failed to load resource: the server responded with a status of 404 (Not Found) (/x.png)" {
		t.Errorf("consoleLine = %q", got)
	}
	if got := consoleLine(ConsoleMessage{Kind: "console.error", Text: "boom"}, page); got != "console.error: boom" {
		t.Errorf("consoleLine without a source = %q", got)
	}
}

// Only the browser's own request for /favicon.ico on the page's origin is
// dropped: not a favicon the page links, not one on another origin or with
// a query, not a console message that mentions it.
func TestAutomaticFaviconDropped(t *testing.T) {
	const page = "https://shop.example/"
	fail := func(kind, u string) ConsoleMessage {
		return ConsoleMessage{Kind: kind, Text: "Failed to load resource: the server responded with a status of 404 (Not Found)", URL: u}
	}
	for _, c := range []struct {
		name  string
		msg   ConsoleMessage
		icons []string
		kept  bool
	}{
		{"automatic", fail("network", "https://shop.example/favicon.ico"), nil, false},
		{"linked by the page", fail("network", "https://shop.example/favicon.ico"), []string{"https://shop.example/favicon.ico"}, true},
		{"page links another icon", fail("network", "https://shop.example/favicon.ico"), []string{"https://shop.example/icon.png"}, false},
		{"another origin", fail("network", "https://cdn.example.net/favicon.ico"), nil, true},
		{"with a query", fail("network", "https://shop.example/favicon.ico?v=2"), nil, true},
		{"another path", fail("network", "https://shop.example/img/favicon.ico"), nil, true},
		{"not a network error", fail("console.error", "https://shop.example/favicon.ico"), nil, true},
	} {
		got := withoutAutomaticFavicon([]ConsoleMessage{c.msg}, page, c.icons)
		if kept := len(got) == 1; kept != c.kept {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.kept)
		}
	}
}

// With real Chromium: the page's failed resources keep their source (the
// path, without the query's token), and the browser's own /favicon.ico
// request, which it makes because the page declares no icon, is not the
// page's error.
func TestRenderedConsoleErrorsSayWhere(t *testing.T) {
	p := newTestPool(t, Config{Tabs: 1})
	site := browserFixture(t, "console-errors")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rp, err := p.Renderer().Render(ctx, site.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rp.ConsoleErrors, "\n")
	for _, want := range []string{"404 (Not Found) (/img/missing.png)", "404 (Not Found) (/js/absent.js)", "exception: Uncaught Error: widget failed to start (/:"} {
		if !strings.Contains(all, want) {
			t.Errorf("console errors lack %q:\n%s", want, all)
		}
	}
	for _, leak := range []string{"s3cr3t", "token=", "favicon", "127.0.0.1"} {
		if strings.Contains(all, leak) {
			t.Errorf("console errors show %q:\n%s", leak, all)
		}
	}
	// Chromium did ask for the icon, so the filter had something to drop.
	testenv.Eventually(t, 10*time.Second, "Chromium's own /favicon.ico request", func() bool {
		return slices.ContainsFunc(site.Hits(), func(h fixture.Hit) bool { return h.Path == "/favicon.ico" })
	})
}

// A favicon the page links itself and does not serve is the page's error.
// (A fresh pool: Chromium remembers a failed favicon URL for the browser's
// life, and would not ask again.)
func TestRenderedLinkedFaviconReported(t *testing.T) {
	p := newTestPool(t, Config{Tabs: 1})
	site := browserFixture(t, "favicon-linked")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rp, err := p.Renderer().Render(ctx, site.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(rp.ConsoleErrors, "\n"); !strings.Contains(all, "404 (Not Found) (/favicon.ico)") {
		t.Errorf("the page's own missing favicon is not reported:\n%s", all)
	}
}

// The engine's renderer tries a render the browser failed once more, on the
// fresh browser the pool starts; when that one stops too, the report says
// so in words for the site's owner.
func TestRendererRetriesOnFreshBrowser(t *testing.T) {
	h := newHoldServer(t)
	p := newTestPool(t, Config{Tabs: 1, JobTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	killAt := func(n int64) {
		testenv.Eventually(t, 30*time.Second, fmt.Sprintf("render %d to reach the server", n), func() bool { return h.started.Load() == n })
		pid := p.Health().PID
		if pid == 0 {
			t.Fatal("no browser process")
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}

	// Killed once: the retry renders the page.
	type result struct {
		page *engine.RenderedPage
		err  error
	}
	done := make(chan result, 1)
	go func() { rp, err := p.Renderer().Render(ctx, h.URL+"/hold"); done <- result{rp, err} }()
	killAt(1)
	testenv.Eventually(t, 30*time.Second, "the pool to notice the crash", func() bool { return p.Health().Restarts == 1 })
	close(h.release)
	r := <-done
	if r.err != nil || !strings.Contains(r.page.HTML, "<title>ok</title>") {
		t.Fatalf("render after one crash: %v %+v", r.err, r.page)
	}
	if n := h.started.Load(); n != 2 {
		t.Errorf("%d requests for the page, want 2 (the render and its retry)", n)
	}

	// Killed twice: ErrCrashed, said for the report.
	h2 := newHoldServer(t)
	h = h2
	go func() { rp, err := p.Renderer().Render(ctx, h2.URL+"/hold"); done <- result{rp, err} }()
	killAt(1)
	killAt(2)
	r = <-done
	if !errors.Is(r.err, ErrCrashed) {
		t.Fatalf("render after two crashes: %v", r.err)
	}
	for _, want := range []string{"again on a fresh browser", "Chromium exited", "the other results do not use the browser"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not say %q", r.err, want)
		}
	}
	if hl := p.Health(); hl.Restarts != 3 {
		t.Errorf("restarts = %d, want 3", hl.Restarts)
	}
}
