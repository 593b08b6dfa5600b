package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// A /docs page that starts and never finishes does not make 1.5 pass: the
// report says the page was cut and why, and the scan ends within the request
// timeout, not the deadline.
func TestDrippingDocsPageIsNotDocumentation(t *testing.T) {
	site := startSite(t, "docsdrip")
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{RequestTimeout: time.Second, Policy: loopback.Policy()}})
	start := time.Now()
	res, err := sc.Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s with a 1 s request timeout: the dripping page held the scan", took)
	}
	c, _ := res.Check("1.5")
	if c.Status != report.Partial {
		t.Errorf("1.5 is %s on a page that never finished: %s", c.Status, c.Message)
	}
	for _, want := range []string{"/docs", "cut", "still arriving when the request's time ran out"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("1.5 message %q does not say %q", c.Message, want)
		}
	}
	if c.Recommendation == "" {
		t.Error("1.5 gives no recommendation for a cut page")
	}
}

// bigSite serves an llms.txt, sitemap and feed of n bytes each, valid and
// whole, and a homepage linking /docs (n bytes of HTML).
func bigSite(t *testing.T, n int) *httptest.Server {
	t.Helper()
	pad := func(head, line, tail string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len() < n-len(tail)-len(line); i++ {
			fmt.Fprintf(&b, line, i)
		}
		b.WriteString(tail)
		return b.String()
	}
	llms := pad("# Big\n\n> A big site.\n\n## Docs\n\n", "- [Page %d](https://example.com/p): notes\n", "")
	sitemap := pad(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, "<url><loc>https://example.com/%d</loc></url>", "</urlset>")
	feed := pad(`<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title><link>https://example.com/</link><description>d</description>`, "<item><title>%d</title></item>", "</channel></rss>")
	docs := pad("<!doctype html><title>Docs</title><body>", "<p>Section %d</p>", "</body>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><html><head><title>Big</title></head><body><a href="/docs">Docs</a></body></html>`)
		case "/llms.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, llms)
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: http://%s/sitemap.xml\n", r.Host)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, sitemap)
		case "/feed":
			w.Header().Set("Content-Type", "application/rss+xml")
			fmt.Fprint(w, feed)
		case "/docs":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, docs)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Documents larger than the scanner reads are reported as too large, never
// judged from their beginning and never as absent-but-fine: the same site
// passes 1.1, 1.5, 1.14 and 4.4 when its documents fit the cap, and fails or
// is partial, saying why, when they do not.
func TestDocumentsOverTheCapAreReportedAsCut(t *testing.T) {
	srv := bigSite(t, 200<<10)
	policy := loopback.Policy()
	roomy := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: policy}})
	tight := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{MaxBody: 100 << 10, Policy: policy}})
	whole, err := roomy.Scan(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := tight.Scan(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1.1", "1.5", "1.14", "4.4"} {
		w, _ := whole.Check(id)
		c, _ := cut.Check(id)
		if w.Status == report.Pass && w.Status == c.Status {
			t.Errorf("%s %s passes on a body cut at 100 KiB: %s", id, c.Name, c.Message)
		}
		if w.Status != report.Pass {
			t.Errorf("%s %s does not pass on the whole documents (%s: %s): the test site is wrong", id, w.Name, w.Status, w.Message)
		}
		if !strings.Contains(c.Message, "larger than the 100 KiB the scanner reads of one document") {
			t.Errorf("%s %s does not say the document was too large: %s", id, c.Name, c.Message)
		}
	}
}

// A scan that has to wait for body memory other scans hold ends within its
// deadline, and the document it could not read is reported as not read, with
// the reason, never as absent or as valid.
func TestScanWaitingForMemoryEndsHonestly(t *testing.T) {
	// Site A keeps an 800 KiB homepage in memory while its /docs hangs.
	docsAsked := make(chan struct{}, 1)
	release := make(chan struct{})
	home := `<!doctype html><title>Hog</title><a href="/docs">Docs</a>` + strings.Repeat("<p>padding</p>", 800<<10/14)
	hog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, home)
		case "/docs":
			select {
			case docsAsked <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer hog.Close()
	defer close(release)
	// Site B has a 450 KiB llms.txt: within its share, more than is free.
	llms := "# Big\n\n> A big site.\n\n## Docs\n\n" + strings.Repeat("- [Page](https://example.com/p): notes\n", 450<<10/40)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Big</title>`)
		case "/llms.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, llms)
		default:
			http.NotFound(w, r)
		}
	}))
	defer big.Close()
	// Requests and scans of a minute: the hog holds its memory until the
	// test ends, so only the waiting scan's own 2 s deadline can end its
	// wait; it must end in less than half a request's time.
	const requestTimeout = time.Minute
	sc := engine.New(engine.Options{Deadline: requestTimeout, Fetch: fetch.Config{
		RequestTimeout: requestTimeout, SharedBodyBytes: 1 << 20, FreeScanBytes: 64 << 10,
		Policy: loopback.Policy()}})
	go sc.Scan(context.Background(), hog.URL, nil)
	select {
	case <-docsAsked: // the homepage was read whole: its memory is held
	case <-time.After(30 * time.Second): // a safety net
		t.Fatal("the first scan never asked for /docs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	res, err := sc.Scan(ctx, big.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= requestTimeout/2 {
		t.Errorf("the waiting scan took %s, past its 2 s deadline", took)
	}
	c, _ := res.Check("1.1")
	if c.Status == report.Pass || !strings.Contains(c.Message, "busy with other scans") || !strings.Contains(c.Message, "/llms.txt") {
		t.Errorf("1.1 of the scan that waited: %s %q; want a verdict that says the file was not read for want of memory", c.Status, c.Message)
	}
}

// A single document fetched for a validation tool says when it was cut, so
// the tool does not validate its beginning as if it were the document.
func TestFetchDocumentSaysWhenCut(t *testing.T) {
	site := startSite(t, "docsdrip")
	sc := engine.New(engine.Options{Fetch: fetch.Config{RequestTimeout: 300 * time.Millisecond, Policy: loopback.Policy()}})
	d, err := sc.FetchDocument(context.Background(), site.URL+"/docs", "text/html")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != 200 || !strings.Contains(d.Cut, "still arriving") {
		t.Errorf("dripping page: status %d, cut %q", d.Status, d.Cut)
	}
	if d, err := sc.FetchDocument(context.Background(), site.URL+"/", "text/html"); err != nil || d.Cut != "" {
		t.Errorf("whole homepage: cut %q (%v)", d.Cut, err)
	}
}
