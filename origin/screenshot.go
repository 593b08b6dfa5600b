package origin

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

const (
	CodeNoScreenshot        = apierr.NoScreenshot
	CodeBrowserUnavailable  = apierr.BrowserUnavailable
	CodeBusy                = apierr.Busy
	defaultScreenshotTTL    = time.Hour
	screenshotCacheControl  = "public, max-age=300"
	backgroundCaptures      = 2 // of the pool's tabs, what background captures may hold at once
	captureDeadline         = 45 * time.Second
	screenshotStoreDeadline = 2 * time.Second
)

// shooter captures a site's homepage after a fresh scan, off the scan's
// path. Captures are best effort and bounded: none while the browser is
// absent or busy, at most backgroundCaptures at once (so the tabs are not all
// taken by work nobody waits for), one per URL at a time, and none while a
// screenshot younger than the TTL is stored.
type shooter struct {
	pool  *browser.Pool // nil: screenshots are not taken
	shots store.Screenshots
	ttl   time.Duration
	base  context.Context
	wg    *sync.WaitGroup // Shutdown waits for it before the store closes
	slots chan struct{}

	mu       sync.Mutex
	inflight map[string]bool
	taken    atomic.Int64 // captures run to the browser (tests check the bounds with it)
}

func newShooter(s *Server) *shooter {
	ttl := s.cfg.ScreenshotTTL
	if ttl <= 0 {
		ttl = defaultScreenshotTTL
	}
	return &shooter{pool: s.cfg.Browser, shots: s.store.Screenshots(), ttl: ttl, base: s.base, wg: &s.scans.persist,
		slots: make(chan struct{}, backgroundCaptures), inflight: map[string]bool{}}
}

// afterScan starts the capture of url (a normalised site URL, the scan's key)
// if one is worth taking. It never blocks: the scan's answer does not wait.
func (sh *shooter) afterScan(url string) {
	if sh.pool == nil {
		return
	}
	select {
	case sh.slots <- struct{}{}:
	default:
		return // enough captures running: this one is skipped, the next scan tries again
	}
	sh.mu.Lock()
	if sh.inflight[url] {
		sh.mu.Unlock()
		<-sh.slots
		return
	}
	sh.inflight[url] = true
	sh.mu.Unlock()
	sh.wg.Add(1) // called from a scan's flight, which holds the group: no race with Shutdown's Wait
	go func() {
		defer sh.wg.Done()
		defer func() {
			sh.mu.Lock()
			delete(sh.inflight, url)
			sh.mu.Unlock()
			<-sh.slots
		}()
		sh.capture(url)
	}()
}

func (sh *shooter) capture(url string) {
	h := sh.pool.Health()
	if h.State == "unavailable" || h.InFlight >= h.Tabs || h.Queued > 0 {
		return // absent or busy: a screenshot is worth less than a render someone waits for
	}
	ctx, cancel := context.WithTimeout(sh.base, captureDeadline)
	defer cancel()
	sctx, scancel := context.WithTimeout(ctx, screenshotStoreDeadline)
	old, err := sh.shots.Get(sctx, url)
	scancel()
	if err == nil && time.Since(old.CapturedAt) < sh.ttl {
		return
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return // the store does not answer: a capture could not be kept
	}
	sh.taken.Add(1)
	png, err := sh.pool.Screenshot(ctx, url, browser.ScreenshotOptions{})
	if err != nil {
		return // the page could not be captured; GET /api/screenshot answers 404 until a later scan succeeds
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), screenshotStoreDeadline)
	defer wcancel()
	_ = sh.shots.Put(wctx, url, png, time.Now(), sh.ttl)
}

func (sh *shooter) capturing(url string) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.inflight[url]
}

func (sh *shooter) close() {
	if sh.pool != nil {
		sh.pool.Close()
	}
}

// health is the browser's entry in /healthz. Chromium being absent is a
// state of the component, not an outage of the service.
func (sh *shooter) health() string {
	if sh.pool == nil {
		return `{"state":"disabled","restarts":0}`
	}
	h := sh.pool.Health()
	return `{"state":"` + h.State + `","restarts":` + strconv.Itoa(h.Restarts) + `,"in_flight":` + strconv.Itoa(h.InFlight) + `,"queued":` + strconv.Itoa(h.Queued) + `}`
}

func browserUnavailable() *APIError {
	return &APIError{Status: 503, Code: CodeBrowserUnavailable, RetryAfter: 60,
		Message: "Screenshots need headless Chromium, which this server does not have: install it (apt-get install chromium) or set CHROME_PATH to its binary, then restart the service."}
}

// getScreenshot serves the stored capture of a site. It never scans or
// captures: screenshots are taken after scans.
func (s *Server) getScreenshot(ctx *fasthttp.RequestCtx) {
	u, aerr := s.scans.validateURL(string(ctx.QueryArgs().Peek("url")))
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	shot, err := s.store.Screenshots().Get(c, u)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(ctx, s.noScreenshot(u))
		return
	case err != nil:
		writeError(ctx, stateUnavailable(err))
		return
	}
	h := &ctx.Response.Header
	h.Set("ETag", shot.ETag)
	h.Set("Last-Modified", shot.CapturedAt.UTC().Format(http.TimeFormat))
	h.Set("Cache-Control", screenshotCacheControl)
	h.Set("Access-Control-Allow-Origin", "*")
	if notModified(ctx, shot) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetContentType("image/png")
	ctx.SetBody(shot.PNG)
}

// noScreenshot says why there is no image and what would change that.
func (s *Server) noScreenshot(u string) *APIError {
	if s.shots.pool == nil || s.shots.pool.Health().State == "unavailable" {
		return browserUnavailable()
	}
	if s.shots.capturing(u) {
		return &APIError{Status: 503, Code: CodeBusy, RetryAfter: 2,
			Message: "The screenshot of this site is being captured right now; retry after Retry-After seconds."}
	}
	return apiErr(404, CodeNoScreenshot, "No screenshot of this site is stored. One is captured in the background after a scan: scan the site (GET /api/scan?url=...), then retry in a few seconds.")
}

// notModified applies If-None-Match (weak comparison, RFC 9110 §13.1.2),
// else If-Modified-Since.
func notModified(ctx *fasthttp.RequestCtx, shot store.Screenshot) bool {
	if inm := ctx.Request.Header.Peek("If-None-Match"); len(inm) > 0 {
		for _, tag := range strings.Split(string(inm), ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == shot.ETag {
				return true
			}
		}
		return false
	}
	if ims := ctx.Request.Header.Peek("If-Modified-Since"); len(ims) > 0 {
		t, err := http.ParseTime(string(ims))
		return err == nil && !shot.CapturedAt.Truncate(time.Second).After(t)
	}
	return false
}
