package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentready/agentready/internal/testing/testenv"
)

var fixtureAddr = netip.MustParseAddr("127.0.0.1")

// onlyFixture admits the fixture servers' address (any port) and refuses
// everything else, 127.0.0.2 included: the tests' stand-in for the
// production policy, which refuses all loopback.
func onlyFixture(ap netip.AddrPort) error {
	if ap.Addr().Unmap() == fixtureAddr {
		return nil
	}
	return errors.New("not the test fixture")
}

// mapResolver resolves fixed names; anything else does not exist.
type mapResolver map[string]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newTestPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	cfg.ExecPath = testenv.Chromium(t)
	if cfg.Check == nil {
		cfg.Check = onlyFixture
	}
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	p := New(cfg)
	t.Cleanup(func() { p.Close() })
	return p
}

// serve starts a loopback fixture with the given pages (path → HTML).
func serve(t testing.TB, pages map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ct := "text/html; charset=utf-8"
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			ct = "text/javascript"
		case strings.HasSuffix(r.URL.Path, ".json"):
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScreenshotIsViewportPNG(t *testing.T) {
	p := newTestPool(t, Config{})
	srv := serve(t, map[string]string{"/": `<!doctype html><title>x</title><body style="background:#3a7"><h1>Hello</h1>`})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	img, err := p.Screenshot(ctx, srv.URL+"/", ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if cfg.Width != 1280 || cfg.Height != 800 {
		t.Fatalf("screenshot is %d×%d, want 1280×800", cfg.Width, cfg.Height)
	}
	full, err := png.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	// The page's background colour, not a blank or error page.
	r, g, b, _ := full.At(640, 700).RGBA()
	if r>>8 != 0x33 || g>>8 != 0xaa || b>>8 != 0x77 {
		t.Fatalf("pixel at (640,700) is #%02x%02x%02x, want the page's #33aa77", r>>8, g>>8, b>>8)
	}
	if h := p.Health(); !h.Started || h.State != "idle" {
		t.Fatalf("health after a job = %+v, want started and idle", h)
	}
}

func TestRenderClientRenderedPage(t *testing.T) {
	p := newTestPool(t, Config{})
	srv := serve(t, map[string]string{
		"/": `<!doctype html><html><head><title>SPA</title><script src="/app.js" defer></script></head><body><div id="root"></div></body></html>`,
		"/app.js": `fetch('/data.json').then(r => r.json()).then(d => {
  document.getElementById('root').innerHTML = '<h1>' + d.title + '</h1><p>' + d.body + '</p><a href="/about">About</a>';
  const ld = document.createElement('script');
  ld.type = 'application/ld+json';
  ld.textContent = JSON.stringify({"@context": "https://schema.org", "@type": "Organization", "name": d.title});
  document.head.appendChild(ld);
});`,
		"/data.json": `{"title": "Rendered by script", "body": "Only visible after JavaScript ran."}`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<!DOCTYPE html>",
		"<h1>Rendered by script</h1>",
		"Only visible after JavaScript ran.",
		`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Rendered by script"}</script>`,
	} {
		if !strings.Contains(r.HTML, want) {
			t.Errorf("rendered HTML lacks %q:\n%s", want, r.HTML)
		}
	}
	if r.Status != 200 || r.FinalURL != srv.URL+"/" || r.Title != "SPA" {
		t.Errorf("status %d, final URL %q, title %q; want 200, %q, SPA", r.Status, r.FinalURL, r.Title, srv.URL+"/")
	}
	if r.Bytes <= 0 {
		t.Errorf("Bytes = %d, want the page's download counted", r.Bytes)
	}
}

func TestRenderObservesRuntimeWebMCPTools(t *testing.T) {
	p := newTestPool(t, Config{})
	srv := serve(t, map[string]string{"/": `<!doctype html><title>tools</title>
<form toolname="subscribe" tooldescription="Subscribe to the newsletter"><input name="email"></form>
<script>
document.modelContext.registerTool({name: "search", description: "Search the catalog",
  inputSchema: {type: "object", properties: {q: {type: "string"}}, required: ["q"]}, execute: async () => ({})});
navigator.modelContext.provideContext({tools: [{name: "legacy", description: "Old API", execute() {}}]});
const cyclic = {}; cyclic.self = cyclic;
document.modelContext.registerTool({name: "cyclic", inputSchema: cyclic, execute() {}});
document.modelContext.registerTool({get name() { throw new Error("hostile getter"); }});
// The recorder's binding is gone before the page runs: nothing to forge with.
for (const k of Object.getOwnPropertyNames(window)) {
  if (k.startsWith("__agentready")) window[k](JSON.stringify({api: "document.modelContext.registerTool", name: "forged"}));
}
setTimeout(() => navigator.modelContext.registerTool({name: "late", description: "Registered after load", execute() {}}), 100);
</script>`})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Tool{}
	var names []string
	for _, tool := range r.Tools {
		got[tool.Name] = tool
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "search,legacy,cyclic,late,subscribe" {
		t.Fatalf("tools = %v, want search,legacy,cyclic,late,subscribe (in registration order, forms last)", names)
	}
	if s := got["search"]; s.API != "document.modelContext.registerTool" || s.Description != "Search the catalog" ||
		string(s.InputSchema) != `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}` {
		t.Errorf("search = %+v (schema %s)", s, s.InputSchema)
	}
	if l := got["legacy"]; l.API != "navigator.modelContext.provideContext" {
		t.Errorf("legacy registered through %q, want navigator.modelContext.provideContext", l.API)
	}
	if c := got["cyclic"]; c.InputSchema != nil {
		t.Errorf("a schema that cannot be serialized came back as %s", c.InputSchema)
	}
	if f := got["subscribe"]; f.API != "form[toolname]" || f.Description != "Subscribe to the newsletter" {
		t.Errorf("declarative tool = %+v", f)
	}
}

func TestRenderReportsConsoleErrors(t *testing.T) {
	p := newTestPool(t, Config{})
	srv := serve(t, map[string]string{"/": `<!doctype html><title>errors</title>
<script>console.log("all good"); console.error("boom", 42); console.assert(false, "assertion failed here");</script>
<script>throw new Error("uncaught failure");</script>
<img src="/missing.png">`})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range r.ConsoleErrors {
		lines = append(lines, m.Kind+": "+m.Text)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"console.error: boom 42", "console.assert: assertion failed here", "exception: Uncaught Error: uncaught failure", "404"} {
		if !strings.Contains(all, want) {
			t.Errorf("console errors lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "all good") {
		t.Errorf("console.log reported as an error:\n%s", all)
	}
}

func TestJobsAreIsolated(t *testing.T) {
	var mu sync.Mutex
	var cookies []string
	scriptHits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			mu.Lock()
			cookies = append(cookies, r.Header.Get("Cookie"))
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>state</title><pre id="out"></pre><script src="/cached.js"></script>
<script>
const seen = {cookie: document.cookie, local: localStorage.getItem("k"), session: sessionStorage.getItem("k"),
  controlled: !!(navigator.serviceWorker && navigator.serviceWorker.controller)};
document.getElementById("out").textContent = JSON.stringify(seen);
document.cookie = "k=v; max-age=3600; path=/";
localStorage.setItem("k", "v");
sessionStorage.setItem("k", "v");
navigator.serviceWorker.register("/sw.js");
</script>`)
		case "/cached.js":
			mu.Lock()
			scriptHits++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/javascript")
			w.Header().Set("Cache-Control", "public, max-age=3600")
			fmt.Fprint(w, "// cacheable")
		case "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `self.addEventListener("fetch", e => e.respondWith(new Response("<title>from the service worker</title>", {headers: {"Content-Type": "text/html"}})));
self.addEventListener("activate", e => e.waitUntil(self.clients.claim()));`)
		}
	}))
	defer srv.Close()
	p := newTestPool(t, Config{Tabs: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const clean = `{"cookie":"","local":null,"session":null,"controlled":false}`
	for i := 0; i < 3; i++ {
		r, err := p.Render(ctx, srv.URL+"/")
		if err != nil {
			t.Fatal(err)
		}
		if r.Title != "state" || !strings.Contains(r.HTML, clean) {
			t.Fatalf("job %d saw state left by an earlier job (title %q):\n%s", i+1, r.Title, r.HTML)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range cookies {
		if c != "" {
			t.Errorf("request %d carried the cookie %q set by an earlier job", i+1, c)
		}
	}
	if scriptHits != 3 {
		t.Errorf("a cacheable script was fetched %d times in 3 jobs; each job must start with an empty cache", scriptHits)
	}
}

// holdServer serves "/" after release is closed (or the request is
// abandoned), and a plain page at "/ok".
type holdServer struct {
	*httptest.Server
	release chan struct{}
	started atomic.Int64
}

func newHoldServer(t *testing.T) *holdServer {
	h := &holdServer{release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			h.started.Add(1)
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>ok</title><p>ok`)
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.Close()
	})
	return h
}

func TestQueueFullIsBusy(t *testing.T) {
	h := newHoldServer(t)
	p := newTestPool(t, Config{Tabs: 1, Queue: 1, JobTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	go func() { _, err := p.Render(ctx, h.URL+"/hold"); errs <- err }()
	testenv.Eventually(t, 30*time.Second, "the first job to reach the server", func() bool { return h.started.Load() == 1 })
	go func() { _, err := p.Render(ctx, h.URL+"/ok"); errs <- err }()
	testenv.Eventually(t, 10*time.Second, "the second job to queue", func() bool { return p.Health().Queued == 1 })
	if h := p.Health(); h.State != "running" || h.InFlight != 1 {
		t.Errorf("health with a job running = %+v", h)
	}
	// "At once" is an order: the refusal comes while the first job still
	// holds the tab and the second the queue (neither ends before the
	// release below), well within the job timeout a wait would take.
	start := time.Now()
	_, err := p.Screenshot(ctx, h.URL+"/ok", ScreenshotOptions{})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("third job: err = %v, want ErrBusy", err)
	}
	if ra := RetryAfter(err); ra < time.Second {
		t.Errorf("RetryAfter = %v, want at least a second", ra)
	}
	if d := time.Since(start); d >= time.Minute/2 {
		t.Errorf("refusing took %v, half the job timeout; a full queue must answer at once", d)
	}
	select {
	case err := <-errs:
		t.Errorf("a job ended (%v) before the refusal was checked: the order proves nothing", err)
	default:
	}
	if h := p.Health(); h.InFlight != 1 || h.Queued != 1 {
		t.Errorf("health when refused = %+v, want one job running and one queued", h)
	}
	close(h.release)
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Errorf("queued job %d: %v", i+1, err)
		}
	}
}

func TestCrashedBrowserIsRestarted(t *testing.T) {
	h := newHoldServer(t)
	p := newTestPool(t, Config{JobTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, err := p.Render(ctx, h.URL+"/hold"); errc <- err }()
	testenv.Eventually(t, 30*time.Second, "the job to reach the server", func() bool { return h.started.Load() == 1 })
	pid := p.browserPID()
	if pid == 0 {
		t.Fatal("no browser process")
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("in-flight job: err = %v, want ErrCrashed", err)
	}
	if d := time.Since(killed); d > 15*time.Second {
		t.Errorf("the in-flight job took %v to fail after the crash; it must not wait for its deadline", d)
	}
	r, err := p.Render(ctx, h.URL+"/ok")
	if err != nil {
		t.Fatalf("job after the crash: %v", err)
	}
	if r.Title != "ok" {
		t.Fatalf("job after the crash rendered %q", r.Title)
	}
	hl := p.Health()
	if hl.Restarts != 1 || !hl.Started || !strings.Contains(hl.LastRestart, "exited") {
		t.Errorf("health after a crash = %+v, want one restart because Chromium exited", hl)
	}
	if np := p.browserPID(); np == pid || np == 0 {
		t.Errorf("browser pid %d after restart, was %d", np, pid)
	}
}

func TestHungBrowserIsRestarted(t *testing.T) {
	h := newHoldServer(t)
	p := newTestPool(t, Config{JobTimeout: time.Minute, PingInterval: 200 * time.Millisecond, PingTimeout: 3 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, err := p.Render(ctx, h.URL+"/hold"); errc <- err }()
	testenv.Eventually(t, 30*time.Second, "the job to reach the server", func() bool { return h.started.Load() == 1 })
	pid := p.browserPID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := <-errc; !errors.Is(err, ErrCrashed) {
		t.Fatalf("in-flight job: err = %v, want ErrCrashed", err)
	}
	if _, err := p.Render(ctx, h.URL+"/ok"); err != nil {
		t.Fatalf("job after the hang: %v", err)
	}
	if hl := p.Health(); hl.Restarts != 1 || !strings.Contains(hl.LastRestart, "stopped answering") {
		t.Errorf("health after a hang = %+v", hl)
	}
}

func TestMemoryBudgetRestartsBrowser(t *testing.T) {
	h := newHoldServer(t)
	p := newTestPool(t, Config{MemoryLimit: 1 << 20, MemoryInterval: 50 * time.Millisecond, JobTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err := p.Render(ctx, h.URL+"/hold")
	if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("err = %v, want ErrCrashed over the memory budget", err)
	}
	if hl := p.Health(); hl.Restarts < 1 || !strings.Contains(hl.LastRestart, "memory budget") {
		t.Errorf("health = %+v", hl)
	}
}

func TestPageWeightCap(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			// A script, not an image: Chromium must read all of it before it
			// can run it, whereas it gives up on an image whose first bytes do
			// not decode, sometimes before the cap is reached.
			fmt.Fprint(w, `<!doctype html><title>heavy</title><script src="/big.js"></script>`)
		case "/big.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, "//")
			chunk := bytes.Repeat([]byte{'a'}, 64<<10)
			for i := 0; i < 160; i++ { // 10 MiB of one comment line
				n, err := w.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	p := newTestPool(t, Config{MaxPageBytes: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := p.Render(ctx, srv.URL+"/")
	if !errors.Is(err, ErrTooHeavy) {
		t.Fatalf("err = %v, want ErrTooHeavy", err)
	}
	// The proxy stops reading: the server cannot push all 10 MiB (socket
	// buffers hold a few MiB at most).
	testenv.Eventually(t, 10*time.Second, "the server's writes to stop", func() bool {
		before := sent.Load()
		time.Sleep(100 * time.Millisecond)
		return sent.Load() == before
	})
	if n := sent.Load(); n >= 10<<20 {
		t.Errorf("the server sent all %d bytes; the cap must cut the download", n)
	}
}

func TestHostilePageHangTimesOut(t *testing.T) {
	srv := serve(t, map[string]string{
		"/loop": `<!doctype html><title>loop</title><script>while (true) {}</script>`,
		"/ok":   `<!doctype html><title>ok</title>`,
		"/dialogs": `<!doctype html><title>before</title><script>
for (let i = 0; i < 5; i++) alert("x"); confirm("y"); prompt("z");
document.title = "after dialogs";
</script>`,
	})
	p := newTestPool(t, Config{})
	ctx0, cancel0 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel0()
	if r, err := p.Render(ctx0, srv.URL+"/dialogs"); err != nil {
		t.Fatalf("a page with dialogs: %v; dialogs must be dismissed", err)
	} else if r.Title != "after dialogs" {
		t.Fatalf("a page with dialogs has the title %q; its script did not run to the end", r.Title)
	}
	// The caller's deadline bounds the job as JobTimeout does.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := p.Render(ctx, srv.URL+"/loop"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a page that never yields took %v with a 3 s deadline", d)
	}
	if _, err := p.Render(ctx0, srv.URL+"/ok"); err != nil {
		t.Fatalf("the next job: %v", err)
	}
}

// Close ends the browser's whole process tree and removes its profile.
func TestCloseLeavesNothing(t *testing.T) {
	srv := serve(t, map[string]string{"/": `<!doctype html><title>x</title>`})
	p := newTestPool(t, Config{})
	if _, err := p.Render(context.Background(), srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	dir, pids := p.inst.dir, treePIDs(p.inst.pid)
	p.mu.Unlock()
	if len(pids) < 2 {
		t.Fatalf("browser tree has %d processes; expected the browser and its helpers", len(pids))
	}
	p.Close()
	for _, pid := range pids {
		// A zombie is gone for our purposes; anything else is a leak.
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z ") {
			t.Errorf("process %d survived Close: %s", pid, b)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("profile directory %s survived Close (%v)", dir, err)
	}
	if _, err := p.Render(context.Background(), srv.URL+"/"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

func TestOutputCaps(t *testing.T) {
	srv := serve(t, map[string]string{"/": `<!doctype html><title>big</title><p>` + strings.Repeat("é😀 ", 5000)})
	p := newTestPool(t, Config{MaxHTMLBytes: 1000, MaxScreenshotBytes: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !r.HTMLTruncated || len(r.HTML) > 1000 || len(r.HTML) < 900 || !utf8.ValidString(r.HTML) {
		t.Errorf("HTML of %d bytes (truncated %v, valid UTF-8 %v), want ≤ 1000 bytes, cut on a character", len(r.HTML), r.HTMLTruncated, utf8.ValidString(r.HTML))
	}
	if _, err := p.Screenshot(ctx, srv.URL+"/", ScreenshotOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a PNG over the cap: err = %v, want ErrTooLarge", err)
	}
	if _, err := p.Screenshot(ctx, srv.URL+"/", ScreenshotOptions{Width: 5000}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("a 5000 px viewport: err = %v, want ErrInvalidOptions", err)
	}
}

// The repository's full fixture site registers its WebMCP tool from a
// deferred script; Render sees it, with the JSON-LD of the page.
func TestRenderFullFixture(t *testing.T) {
	srv := serveFullSite(t)
	p := newTestPool(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "create_invoice_draft" || r.Tools[0].API != "document.modelContext.registerTool" {
		t.Errorf("tools = %+v, want create_invoice_draft registered through document.modelContext", r.Tools)
	}
	if !strings.Contains(r.HTML, `"@type":"WebSite","name":"Acme Invoices"`) {
		t.Errorf("rendered HTML lacks the JSON-LD")
	}
	// The fixture's HTML names images it does not have; nothing else fails.
	for _, m := range r.ConsoleErrors {
		if m.Kind != "network" || !strings.Contains(m.Text, "404") {
			t.Errorf("unexpected console error on the fixture: %+v", m)
		}
	}
}
