package browser

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

//go:embed webmcp.js
var webmcpShim string

// Viewport of screenshots and renders unless ScreenshotOptions says otherwise.
const (
	ViewportWidth  = 1280
	ViewportHeight = 800
)

const (
	maxConsole     = 50
	maxConsoleText = 1000
	maxTools       = 200
	maxToolPayload = 80 << 10
)

// slot is one job's tab: a fresh browser context (cookies, storage, cache and
// service workers of its own, thrown away with it) whose traffic goes through
// its own proxy endpoint, so bytes and refusals are counted per job.
type slot struct {
	in     *instance
	ep     *endpoint
	ctx    context.Context
	cancel context.CancelFunc
	frame  cdp.FrameID
	once   sync.Once

	changed chan struct{}

	mu          sync.Mutex
	url         string
	navigating  bool
	dcl, load   time.Time
	idle        time.Time
	status      int64
	guard       string
	crashed     bool
	tools       []Tool
	console     []ConsoleMessage
	consoleDrop int
}

// newSlot prepares a tab: viewport, the WebMCP recorder, and nothing loaded.
func (in *instance) newSlot(ctx context.Context) (*slot, error) {
	ep, err := in.p.proxy.listen(in.p.cfg.MaxPageBytes)
	if err != nil {
		return nil, err
	}
	s := &slot{in: in, ep: ep, changed: make(chan struct{}, 1)}
	tctx, tcancel := chromedp.NewContext(in.bctx,
		chromedp.WithNewBrowserContext(func(c *target.CreateBrowserContextParams) {
			c.ProxyServer = ep.URL()
			c.ProxyBypassList = "<-loopback>"
		}),
		chromedp.WithListener(s.onEvent),
	)
	s.ctx, s.cancel = tctx, tcancel
	// The first Do creates the tab and binds it to tctx, so it runs on tctx
	// itself and the bounds are applied from outside.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx, chromedp.Func(s.setup)) }()
	timer := time.NewTimer(in.p.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		err = errors.New("preparing a tab took longer than " + in.p.cfg.StartTimeout.String())
	case <-ctx.Done():
		err = ctx.Err()
	case <-in.dead:
		err = in.cause
	}
	if err != nil {
		s.discard()
		return nil, err
	}
	return s, nil
}

func (s *slot) setup(ctx context.Context, t *chromedp.Target) error {
	s.mu.Lock()
	s.frame = cdp.FrameID(t.TargetID) // a page target's main frame has its id
	s.mu.Unlock()
	if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: ViewportWidth, Height: ViewportHeight, DeviceScaleFactor: 1,
	}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, t, runtime.AddBinding, runtime.AddBindingParams{Name: s.in.binding}); err != nil {
		return err
	}
	src := strings.ReplaceAll(webmcpShim, "__BINDING__", s.in.binding)
	if _, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		return err
	}
	return nil
}

// discard closes the tab, disposes of its browser context and closes its
// proxy endpoint (ending every connection it had), off the job's path.
func (s *slot) discard() {
	s.once.Do(func() {
		p := s.in.p
		p.bg.Add(1)
		s.in.disposing.Add(1)
		go func() {
			defer p.bg.Done()
			defer s.in.disposing.Add(-1)
			s.cancel()
			s.ep.close()
		}()
	})
}

func (s *slot) prepare(u string) *slot {
	s.mu.Lock()
	s.url = u
	s.mu.Unlock()
	return s
}

func (s *slot) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *slot) tabCrashed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashed
}

// onEvent runs in chromedp's read loop for the tab: it only records.
func (s *slot) onEvent(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventLifecycleEvent:
		if !s.navigating || e.FrameID != s.frame {
			return
		}
		now := time.Now()
		switch e.Name {
		case "init":
			// A new document (a client-side redirect, a meta refresh) starts
			// over.
			s.dcl, s.load, s.idle = time.Time{}, time.Time{}, time.Time{}
		case "DOMContentLoaded":
			s.dcl = now
		case "load":
			s.load = now
		case "networkAlmostIdle", "networkIdle":
			// Almost idle (at most two connections for 500 ms) is enough:
			// pages that keep a socket or a long poll open never go idle.
			if s.idle.IsZero() {
				s.idle = now
			}
		default:
			return
		}
		s.notify()
	case *network.EventResponseReceived:
		if !s.navigating || e.Type != network.ResourceTypeDocument || e.FrameID != s.frame || e.Response == nil {
			return
		}
		s.status = e.Response.Status
		s.guard = ""
		for k, v := range e.Response.Headers {
			if strings.EqualFold(k, guardHeader) {
				s.guard, _ = v.(string)
			}
		}
		s.notify()
	case *page.EventJavascriptDialogOpening:
		// alert(), confirm() and prompt() block the page until answered; a
		// page must not stall a job with them. Commands cannot run inside
		// the read loop, hence the goroutine.
		go chromedp.Call(s.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	case *inspector.EventTargetCrashed:
		s.crashed = true
		s.notify()
	case *runtime.EventBindingCalled:
		if e.Name != s.in.binding || len(s.tools) >= maxTools {
			return
		}
		if t, ok := parseTool(e.Payload); ok {
			s.tools = append(s.tools, t)
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError && e.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		m := ConsoleMessage{Kind: "console." + string(e.Type), Text: argsText(e.Args)}
		if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
			f := e.StackTrace.CallFrames[0]
			m.URL, m.Line = f.URL, int(f.LineNumber)+1
		}
		s.addConsole(m)
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		if d == nil {
			return
		}
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n")
			text = strings.TrimSpace(text + " " + desc)
		}
		s.addConsole(ConsoleMessage{Kind: "exception", Text: text, URL: d.URL, Line: int(d.LineNumber) + 1})
	case *log.EventEntryAdded:
		if e.Entry == nil || e.Entry.Level != log.EntryLevelError {
			return
		}
		line := 0
		if e.Entry.LineNumber > 0 {
			line = int(e.Entry.LineNumber) + 1
		}
		s.addConsole(ConsoleMessage{Kind: string(e.Entry.Source), Text: e.Entry.Text, URL: e.Entry.URL, Line: line})
	}
}

func (s *slot) addConsole(m ConsoleMessage) {
	if len(s.console) >= maxConsole {
		s.consoleDrop++
		return
	}
	m.Text = truncate(m.Text, maxConsoleText)
	m.URL = truncate(m.URL, maxConsoleText)
	s.console = append(s.console, m)
}

func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if a == nil {
			continue
		}
		var str string
		if len(a.Value) > 0 && json.Unmarshal(a.Value, &str) == nil {
			parts = append(parts, str)
		} else if len(a.Value) > 0 {
			parts = append(parts, string(a.Value))
		} else if a.Description != "" {
			parts = append(parts, a.Description)
		} else if a.UnserializableValue != "" {
			parts = append(parts, string(a.UnserializableValue))
		} else {
			parts = append(parts, string(a.Type))
		}
		if len(parts) > 16 {
			break
		}
	}
	return strings.Join(parts, " ")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// parseTool reads one report of the WebMCP recorder. The page can call the
// binding only before the recorder hides it, but the payload is treated as
// hostile all the same: bounded, and dropped unless it is the expected shape.
func parseTool(payload string) (Tool, bool) {
	if len(payload) > maxToolPayload {
		return Tool{}, false
	}
	var raw struct {
		API         string  `json:"api"`
		Name        string  `json:"name"`
		Description string  `json:"description"`
		InputSchema *string `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(payload), &raw); err != nil {
		return Tool{}, false
	}
	switch raw.API {
	case "navigator.modelContext.registerTool", "navigator.modelContext.provideContext",
		"document.modelContext.registerTool", "document.modelContext.provideContext":
	default:
		return Tool{}, false
	}
	t := Tool{API: raw.API, Name: truncate(raw.Name, 256), Description: truncate(raw.Description, 4096)}
	if t.Name == "" {
		return Tool{}, false // not a tool an agent could call
	}
	if raw.InputSchema != nil && json.Valid([]byte(*raw.InputSchema)) {
		t.InputSchema = json.RawMessage(*raw.InputSchema)
	}
	return t, true
}

// Tool is a WebMCP tool the page registered while it ran.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// API is how it was registered: "document.modelContext.registerTool",
	// "navigator.modelContext.provideContext", … or "form[toolname]" for
	// the declarative form.
	API string `json:"api"`
}

// ConsoleMessage is an error the page reported: a console.error or failed
// console.assert, an uncaught exception, or a browser log error such as a
// failed subresource.
type ConsoleMessage struct {
	Kind string `json:"kind"` // "console.error", "console.assert", "exception", "network", "javascript", …
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Rendered is a page after its scripts ran.
type Rendered struct {
	URL      string `json:"url"`       // as requested
	FinalURL string `json:"final_url"` // after redirects, meta refreshes and script navigation
	Status   int    `json:"status"`    // HTTP status of the final document (0 if not known)
	Title    string `json:"title"`
	// HTML is the serialized DOM (doctype included), at most MaxHTMLBytes.
	HTML          string `json:"html"`
	HTMLTruncated bool   `json:"html_truncated,omitempty"`
	// ConsoleErrors are the page's errors, not the browser's own failed
	// request for /favicon.ico (withoutAutomaticFavicon).
	ConsoleErrors []ConsoleMessage `json:"console_errors"`
	// ConsoleDropped counts errors beyond the first 50.
	ConsoleDropped int    `json:"console_dropped,omitempty"`
	Tools          []Tool `json:"tools"`
	// Bytes is what the page downloaded, all requests together; Blocked how
	// many of its connections the address guard refused.
	Bytes   int64         `json:"bytes"`
	Blocked int64         `json:"blocked"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// ScreenshotOptions adjusts a capture.
type ScreenshotOptions struct {
	// Width and Height are the viewport; 0 means 1280×800.
	Width, Height int
}

// Screenshot loads url in a fresh tab and captures the viewport as PNG.
func (p *Pool) Screenshot(ctx context.Context, url string, opts ScreenshotOptions) ([]byte, error) {
	if opts.Width < 0 || opts.Height < 0 || opts.Width > 4096 || opts.Height > 4096 {
		return nil, ErrInvalidOptions
	}
	var out []byte
	err := p.run(ctx, url, func(ctx context.Context, s *slot) error {
		if (opts.Width > 0 && opts.Width != ViewportWidth) || (opts.Height > 0 && opts.Height != ViewportHeight) {
			w, h := int64(opts.Width), int64(opts.Height)
			if w == 0 {
				w = ViewportWidth
			}
			if h == 0 {
				h = ViewportHeight
			}
			if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1}); err != nil {
				return err
			}
		}
		if err := s.navigate(ctx, false); err != nil {
			return err
		}
		res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &optimizeForSpeed})
		if err != nil {
			return err
		}
		if len(res.Data) > p.cfg.MaxScreenshotBytes {
			return ErrTooLarge
		}
		if !bytes.HasPrefix(res.Data, []byte("\x89PNG\r\n\x1a\n")) {
			return withDetail(ErrLoad, "the browser returned no PNG")
		}
		out = res.Data
		return nil
	})
	return out, err
}

// optimizeForSpeed trades PNG size for encoding time: a 1280×800 capture
// encodes several times faster, and the size cap still applies.
var optimizeForSpeed = true

// renderJS reads the page in an isolated world, where the page's scripts
// cannot have replaced the built-ins it uses. __MAX__ is the HTML cap in
// UTF-16 units (the byte cap is applied again in Go).
const renderJS = `(() => {
  const d = document;
  let html = "";
  if (d.doctype) html = "<!DOCTYPE " + d.doctype.name + ">\n";
  if (d.documentElement) html += d.documentElement.outerHTML;
  const forms = [];
  for (const f of d.querySelectorAll("form[toolname]")) {
    if (forms.length >= 200) break;
    forms.push({name: (f.getAttribute("toolname") || "").slice(0, 256), description: (f.getAttribute("tooldescription") || "").slice(0, 4096)});
  }
  const icons = [];
  for (const l of d.querySelectorAll("link[rel][href]")) {
    if (icons.length >= 20) break;
    if (/(^|\s)icon(\s|$)/i.test(l.getAttribute("rel"))) icons.push(l.href.slice(0, 2048));
  }
  return {url: location.href, title: d.title.slice(0, 1000), truncated: html.length > __MAX__, html: html.slice(0, __MAX__), forms, icons};
})()`

type renderEval struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Truncated bool   `json:"truncated"`
	HTML      string `json:"html"`
	Forms     []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"forms"`
	Icons []string `json:"icons"` // the hrefs of <link rel="icon"> (and "shortcut icon")
}

// Render loads url in a fresh tab, lets its scripts run until the network is
// idle (at most Settle after load), and returns the DOM, the console errors
// and the WebMCP tools the page registered.
func (p *Pool) Render(ctx context.Context, url string) (*Rendered, error) {
	var out *Rendered
	start := time.Now()
	err := p.run(ctx, url, func(ctx context.Context, s *slot) error {
		if err := s.navigate(ctx, true); err != nil {
			return err
		}
		world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: s.frame, WorldName: "agentready"})
		if err != nil {
			return err
		}
		js := strings.ReplaceAll(renderJS, "__MAX__", itoa(p.cfg.MaxHTMLBytes))
		ev, err := chromedp.Run(ctx, chromedp.Evaluate[renderEval](js, func(e *runtime.EvaluateParams) {
			e.ContextID = world.ExecutionContextID
		}))
		if err != nil {
			return err
		}
		r := &Rendered{URL: url, FinalURL: ev.URL, Title: ev.Title, HTML: ev.HTML}
		if ev.Truncated || len(r.HTML) > p.cfg.MaxHTMLBytes {
			r.HTMLTruncated = true
			r.HTML = truncate(r.HTML, p.cfg.MaxHTMLBytes)
		}
		s.mu.Lock()
		r.Status = int(s.status)
		r.ConsoleErrors = withoutAutomaticFavicon(s.console, ev.URL, ev.Icons)
		r.ConsoleDropped = s.consoleDrop
		r.Tools = append([]Tool{}, s.tools...)
		s.mu.Unlock()
		for _, f := range ev.Forms {
			if f.Name == "" {
				continue
			}
			if len(r.Tools) >= maxTools {
				break
			}
			r.Tools = append(r.Tools, Tool{API: "form[toolname]", Name: truncate(f.Name, 256), Description: truncate(f.Description, 4096)})
		}
		r.Bytes = s.ep.meter.n.Load()
		r.Blocked = s.ep.meter.blocked.Load()
		r.Elapsed = time.Since(start)
		out = r
		return nil
	})
	return out, err
}

// withoutAutomaticFavicon drops the browser's own request for /favicon.ico
// when it failed: Chromium asks for it on its own when a page declares no
// icon, so its 404 is not the page's error. A page that links that URL
// itself (<link rel="icon" href="/favicon.ico">) keeps its error.
func withoutAutomaticFavicon(console []ConsoleMessage, pageURL string, icons []string) []ConsoleMessage {
	out := make([]ConsoleMessage, 0, len(console))
	page, err := url.Parse(pageURL)
	for _, m := range console {
		if err == nil && m.Kind == string(log.EntrySourceNetwork) && isAutomaticFavicon(m.URL, page, icons) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func isAutomaticFavicon(raw string, page *url.URL, icons []string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Path != "/favicon.ico" || u.RawQuery != "" || u.Scheme != page.Scheme || u.Host != page.Host {
		return false
	}
	for _, icon := range icons {
		if l, err := url.Parse(icon); err == nil && l.Scheme == u.Scheme && l.Host == u.Host && l.Path == u.Path {
			return false // the page asked for it
		}
	}
	return true
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// navigate loads the slot's URL and waits until the page is usable: the load
// event (or DOMContentLoaded plus LoadGrace when something stalls load), and
// with settle also network idle (at most Settle after load).
func (s *slot) navigate(ctx context.Context, settle bool) error {
	cfg := &s.in.p.cfg
	s.mu.Lock()
	s.navigating = true
	u := s.url
	s.mu.Unlock()
	s.ep.armed.Store(true)
	res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: u})
	if err != nil {
		return err
	}
	if res.IsDownload {
		return withDetail(ErrLoad, "the URL is a file download, not a page")
	}
	if res.ErrorText != "" {
		return s.loadFailure(res.ErrorText)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		dcl, load, idle, guard, crashed := s.dcl, s.load, s.idle, s.guard, s.crashed
		s.mu.Unlock()
		switch guard {
		case "refused":
			return withDetail(ErrBlocked, "the page or one of its redirects")
		case "over-weight":
			return ErrTooHeavy
		case "unreachable":
			return withDetail(ErrLoad, "the site could not be reached")
		}
		if s.ep.meter.tripped() {
			return ErrTooHeavy
		}
		if crashed {
			return withDetail(ErrLoad, "the page crashed its browser tab (it may use too much memory)")
		}
		now := time.Now()
		wait := time.Hour
		switch {
		case !load.IsZero():
			if !settle || !idle.IsZero() {
				return nil
			}
			if d := cfg.Settle - now.Sub(load); d > 0 {
				wait = d
			} else {
				return nil
			}
		case !dcl.IsZero():
			if d := cfg.LoadGrace - now.Sub(dcl); d > 0 {
				wait = d
			} else {
				return nil
			}
		}
		timer.Reset(wait)
		select {
		case <-s.changed:
		case <-timer.C:
		case <-s.ep.meter.over:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// loadFailure names why Chromium could not load the page, in words that are
// safe to show.
func (s *slot) loadFailure(text string) error {
	if s.ep.meter.tripped() {
		return ErrTooHeavy
	}
	if s.ep.meter.blocked.Load() > 0 {
		return withDetail(ErrBlocked, "the page or one of its redirects")
	}
	switch {
	case strings.Contains(text, "ERR_CERT"), strings.Contains(text, "ERR_SSL"):
		return withDetail(ErrLoad, "the site's TLS certificate or handshake is not valid")
	case strings.Contains(text, "ERR_TOO_MANY_REDIRECTS"):
		return withDetail(ErrLoad, "the page redirects in a loop")
	case strings.Contains(text, "ERR_TUNNEL_CONNECTION_FAILED"), strings.Contains(text, "ERR_CONNECTION"),
		strings.Contains(text, "ERR_NAME_NOT_RESOLVED"), strings.Contains(text, "ERR_ADDRESS_UNREACHABLE"):
		return withDetail(ErrLoad, "the site could not be reached")
	case strings.Contains(text, "ERR_TIMED_OUT"):
		return withDetail(ErrLoad, "the site did not answer in time")
	case strings.Contains(text, "ERR_BLOCKED"), strings.Contains(text, "ERR_UNKNOWN_URL_SCHEME"):
		return withDetail(ErrLoad, "the browser refused to load the page")
	}
	return withDetail(ErrLoad, "the page did not load")
}
