package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/loopback"
)

const serverHTML = `<!doctype html><html><head><title>Shop</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Shop"}</script></head>
<body><main><h1>Shop</h1><p>Welcome to the shop.</p><a href="/about">About</a></main></body></html>`

const renderedHTML = `<!doctype html><html><head><title>Shop</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Shop"}</script>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Shop Inc"}</script></head>
<body><main><h1>Shop</h1><p>Welcome to the shop.</p><a href="/about">About</a>
<h2>Today's offers</h2><p>Welcome offers on red shoes and red hats.</p>
<a href="/offers">Offers</a><a href="javascript:void(0)">menu</a><a href="mailto:a@b.example">mail</a></main></body></html>`

func TestCompareRendered(t *testing.T) {
	base, _ := url.Parse("https://shop.example/")
	r := engine.CompareRendered([]byte(serverHTML), []byte(renderedHTML), base)
	if r.WordsOnlyRendered != 14 || r.MissedText != "Today s offers Welcome offers on red shoes and red hats Offers menu mail" {
		t.Errorf("words only after rendering: %d %q", r.WordsOnlyRendered, r.MissedText)
	}
	if r.RenderedWords <= r.ServerWords {
		t.Errorf("words %d → %d", r.ServerWords, r.RenderedWords)
	}
	if !reflect.DeepEqual(r.Headings, []string{"h2: Today's offers"}) {
		t.Errorf("headings %q", r.Headings)
	}
	if !reflect.DeepEqual(r.Links, []string{"https://shop.example/offers"}) {
		t.Errorf("links %q (javascript: and mailto: are not links an agent follows)", r.Links)
	}
	if r.ServerJSONLD != 1 || r.RenderedJSONLD != 2 || !reflect.DeepEqual(r.JSONLDTypes, []string{"Organization"}) {
		t.Errorf("JSON-LD %d → %d, only rendered %q", r.ServerJSONLD, r.RenderedJSONLD, r.JSONLDTypes)
	}
	if !r.Missing() {
		t.Error("Missing() is false with content only after rendering")
	}

	// The same document on both sides: nothing is missed.
	same := engine.CompareRendered([]byte(renderedHTML), []byte(renderedHTML), base)
	if same.Missing() || same.WordsOnlyRendered != 0 || len(same.Links) != 0 {
		t.Errorf("identical documents differ: %+v", same)
	}
	// Hostile input: no panic, bounded lists.
	var b strings.Builder
	b.WriteString("<main>")
	for i := 0; i < 500; i++ {
		b.WriteString(`<a href="/p` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `">x</a><h3>t` + string(rune('a'+i%26)) + `</h3>`)
	}
	big := engine.CompareRendered(nil, []byte(b.String()), base)
	if len(big.Links) > 50 || len(big.Headings) > 50 {
		t.Errorf("lists not bounded: %d links, %d headings", len(big.Links), len(big.Headings))
	}
	engine.CompareRendered([]byte("<<<>>>\x00"), []byte("</html><script type=application/ld+json>{"), nil)
}

type fakeRenderer struct {
	page *engine.RenderedPage
	err  error
	got  string
}

func (f *fakeRenderer) Render(_ context.Context, u string) (*engine.RenderedPage, error) {
	f.got = u
	return f.page, f.err
}

// A scan with a renderer adds the rendered block and keeps every verdict
// on the server's HTML; without one the block is absent from the JSON.
func TestScanWithRenderer(t *testing.T) {
	site := startSite(t, "spa")
	plain, err := loopbackScanner(20*time.Second).Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(plain)
	if plain.Rendered != nil || strings.Contains(string(b), `"rendered"`) {
		t.Fatal("a scan without a renderer has a rendered block")
	}
	fr := &fakeRenderer{page: &engine.RenderedPage{FinalURL: site.URL + "/", HTML: renderedHTML, ConsoleErrors: []string{"boom"},
		Tools: []report.WebMCPTool{{Name: "search", API: "navigator.modelContext.registerTool"}}}}
	sc := engine.New(engine.Options{Deadline: 20 * time.Second, Renderer: fr,
		Fetch: fetch.Config{Policy: loopback.Policy()}})
	res, err := sc.Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fr.got != res.URL {
		t.Errorf("rendered %q, scanned %q", fr.got, res.URL)
	}
	r := res.Rendered
	if r == nil || r.Error != "" || r.WordsOnlyRendered == 0 || len(r.JSONLDTypes) == 0 || len(r.Tools) != 1 || r.ConsoleErrors[0] != "boom" {
		t.Fatalf("rendered block %+v", r)
	}
	for i, c := range res.Checks {
		if c.Status != plain.Checks[i].Status {
			t.Errorf("%s changed with a renderer: %s → %s (the checks judge the server HTML)", c.ID, plain.Checks[i].Status, c.Status)
		}
	}

	// A renderer that fails: the scan succeeds and says why nothing was
	// rendered, in the renderer's words only when its error is written for
	// a report (engine.RenderFailure); any other error's text (a library's,
	// with an address) never reaches it.
	for _, c := range []struct {
		err  error
		want string
	}{
		{reportedFailure{errors.New(`exec: "chromium": executable file not found in $PATH`), "the headless browser is not available"}, "the headless browser is not available"},
		{fmt.Errorf("job 3: %w", reportedFailure{errors.New("over cap"), "the page downloads more than the browser's page weight cap"}), "the page downloads more than the browser's page weight cap"},
		{reportedFailure{errors.New("dial tcp 10.1.2.3:9222: connection refused"), ""}, "the browser could not render the page"},
		{errors.New("dial tcp 10.1.2.3:9222: connection refused"), "the browser could not render the page"},
		{fmt.Errorf("cdp: %w", context.DeadlineExceeded), "the page was not rendered within the scan deadline"},
	} {
		fr = &fakeRenderer{err: c.err}
		sc = engine.New(engine.Options{Deadline: 20 * time.Second, Renderer: fr,
			Fetch: fetch.Config{Policy: loopback.Policy()}})
		res, err = sc.Scan(context.Background(), site.URL, nil)
		if err != nil || res.Rendered == nil || res.Rendered.Error != c.want {
			t.Errorf("renderer failing with %q: %v %+v, want %q", c.err, err, res.Rendered, c.want)
		}
	}
}

// reportedFailure is a renderer's error with the words it wrote for a
// report ("" for none).
type reportedFailure struct {
	error
	text string
}

func (e reportedFailure) ReportText() string { return e.text }
