package origin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/netip"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

const (
	CodeNoScreenshot        = apierr.NoScreenshot
	CodeBrowserUnavailable  = apierr.BrowserUnavailable
	CodeBusy                = apierr.Busy
	defaultScreenshotTTL    = time.Hour
	screenshotCacheControl  = "public, max-age=300"
	screenshotStoreDeadline = 2 * time.Second

	// captureDeadline bounds one capture from its turn to the stored PNG. A
	// healthy page takes 0.3–2 s on a warm browser (a cold Chromium adds
	// 1–2 s); the browser uses a page that has not fired load 5 s after
	// DOMContentLoaded as it is. A page with no DOMContentLoaded after 15 s
	// gives no useful picture, and no site holds a capture place longer.
	captureDeadline = 15 * time.Second
	// captureQueue bounds the sites waiting for a capture. A site that
	// arrives at a full queue is refused, not queued, and remembered as
	// missing, so its next scan (cached or not) queues it again: a queued
	// entry is a promise kept in order, which dropping the oldest would
	// break for the site that waited longest. At 1–2 s a capture and 4
	// places a full queue drains in about a minute; if every entry hung,
	// in 128 × 15 s / 4 = 8 minutes.
	captureQueue = 128
	// ownerShare bounds the captures one owner (a registrable domain, a
	// server's address or IPv6 /64) may have waiting, and one at a time
	// runs: a server on many ports, or wildcard DNS, is one owner, and can
	// neither fill the queue nor hold every tab with pages that hang.
	ownerShare = 4
	// ownerLookupTimeout bounds resolving a site's name to find its owner;
	// a name that does not resolve in time counts under its domain alone.
	ownerLookupTimeout = 2 * time.Second
	// captureBackoff: a site whose capture failed (the page timed out,
	// did not load, was too heavy or was refused) is not tried again for
	// this long, whatever scans it. A page that hangs then costs one place
	// for 15 s every 10 minutes, the scan cache's default lifetime.
	captureBackoff = 10 * time.Minute
	// retryBackoff: a capture that failed for a reason that is not the
	// page's (the browser crashed, possibly on another site's page; the
	// store did not answer) is tried again sooner.
	retryBackoff = time.Minute
	// missingEntries bounds the sites remembered as lacking a screenshot;
	// beyond it an arbitrary one is forgotten (its next fresh scan still
	// captures it).
	missingEntries = 4096

	// The paid pool: a Chromium of its own for the paid deep scans' renders
	// and captures, so no anonymous caller's page can hang, crash or
	// bloat the browser a paying caller's render runs on. Two tabs are what
	// paid renders were guaranteed when they shared four tabs with at most
	// two background captures; each tab kept warm costs renderer memory
	// (docs/benchmarks.md has the second Chromium's cost). The queue lets
	// concurrent paid scans wait for a tab within their own deadline
	// rather than be refused as busy.
	paidBrowserTabs  = 2
	paidBrowserQueue = 32
)

// shooter captures a site's homepage in the background after a scan, off
// the scan's path, on the background pool, and captures for paid deep scans
// on the paid pool. Background captures wait in one fair queue: one entry
// per site (FIFO across sites, at most captureQueue), as many captures at
// once as the pool has tabs, each within captureDeadline, and a site whose
// capture failed waits out a back-off. A site whose screenshot is missing
// (its capture failed or was refused at a full queue) is queued again by
// its next scan, even one served from the scan cache; that path only looks
// at an in-memory set. No capture runs while a screenshot younger than the
// TTL is stored.
type shooter struct {
	pool  *browser.Pool // background captures; nil: screenshots are not taken
	paid  *browser.Pool // paid deep scans' renders and captures
	shots store.Screenshots
	ttl   time.Duration
	ctx   context.Context // canceled by close
	stop  context.CancelFunc
	slots int // captures at once: the background pool's tabs

	// Production values from the constants; tests shorten or move them.
	deadline time.Duration
	backoff  time.Duration
	queueMax int
	share    int // ownerShare
	now      func() time.Time
	// resolve finds a host's addresses for its owner (nil: by name only).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	mu        sync.Mutex
	closed    bool
	queue     []capture       // sites waiting, oldest first
	pending   map[string]bool // queued, being captured, or resolving its owner
	queued    map[string]int  // captures waiting per owner
	active    map[string]int  // captures running per owner
	running   int             // capture workers
	inCapture int             // of them, those capturing (the others look for work)
	missing   map[string]missed
	nMissing  atomic.Int64 // len(missing), read without the lock by cached scans
	wg        sync.WaitGroup
	taken     atomic.Int64 // captures run to the browser (tests check the bounds with it)
	refused   atomic.Int64 // sites refused at a full queue
}

// missed is a site without a screenshot: when it may be captured again, and
// why the last capture failed ("" when it was refused at a full queue).
type missed struct {
	retryAt time.Time
	why     string
}

func newShooter(s *Server) *shooter {
	ttl := s.cfg.ScreenshotTTL
	if ttl <= 0 {
		ttl = defaultScreenshotTTL
	}
	ctx, stop := context.WithCancel(s.base)
	sh := &shooter{pool: s.cfg.Browser, paid: s.cfg.PaidBrowser, shots: s.store.Screenshots(), ttl: ttl, ctx: ctx, stop: stop,
		deadline: captureDeadline, backoff: captureBackoff, queueMax: captureQueue, share: ownerShare, now: time.Now,
		pending: map[string]bool{}, missing: map[string]missed{}, queued: map[string]int{}, active: map[string]int{},
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}
	if sh.pool != nil {
		sh.slots = sh.pool.Health().Tabs
	}
	return sh
}

// afterScan queues the capture of url (a normalised site URL, the scan's
// key) after a scan: after a fresh one unless the site waits out a
// back-off, after a cached one only when its screenshot is known missing.
// It never blocks (a host name's owner is resolved off the caller's path),
// and for a cached scan with nothing missing it costs one atomic load.
func (sh *shooter) afterScan(url string, cached bool) {
	if sh.pool == nil || (cached && sh.nMissing.Load() == 0) {
		return
	}
	sh.mu.Lock()
	if !sh.wantedLocked(url, cached) {
		sh.mu.Unlock()
		return
	}
	host := hostOf(url)
	if _, err := netip.ParseAddr(host); err == nil || sh.resolve == nil {
		sh.enqueueLocked(url, ownersOf(host, nil))
		sh.mu.Unlock()
		return
	}
	sh.pending[url] = true // held while the name resolves: one entry per site
	sh.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(sh.ctx, ownerLookupTimeout)
		addrs, _ := sh.resolve(ctx, host)
		cancel()
		sh.mu.Lock()
		defer sh.mu.Unlock()
		delete(sh.pending, url)
		if !sh.closed {
			sh.enqueueLocked(url, ownersOf(host, addrs))
		}
	}()
}

// wantedLocked reports whether a scan of url should queue its capture.
func (sh *shooter) wantedLocked(url string, cached bool) bool {
	if sh.closed || sh.pending[url] {
		return false
	}
	if m, ok := sh.missing[url]; ok {
		return !sh.now().Before(m.retryAt)
	}
	return !cached
}

// enqueueLocked queues url's capture under its owners, unless the queue is
// full or one of its owners already holds its share: then the site is
// refused and remembered as missing, so its next scan queues it again.
func (sh *shooter) enqueueLocked(url string, owners []string) {
	if len(sh.queue) >= sh.queueMax || sh.overShareLocked(owners) {
		sh.refused.Add(1)
		sh.markMissingLocked(url, missed{retryAt: sh.now()})
		return
	}
	sh.queue = append(sh.queue, capture{url: url, owners: owners})
	sh.pending[url] = true
	for _, o := range owners {
		sh.queued[o]++
	}
	sh.dispatchLocked()
}

// overShareLocked: one of owners already has ownerShare captures waiting.
func (sh *shooter) overShareLocked(owners []string) bool {
	for _, o := range owners {
		if sh.queued[o] >= sh.share {
			return true
		}
	}
	return false
}

// dispatchLocked starts capture workers while there are places and more
// captures that may start than idle workers to take them.
func (sh *shooter) dispatchLocked() {
	for sh.running < sh.slots && sh.claimableLocked(sh.running-sh.inCapture) {
		sh.running++
		sh.wg.Add(1)
		go sh.work()
	}
}

// claimableLocked reports whether more queued captures may start now than
// want: at most one per owner, and none of an owner with a capture running.
// It stops counting once the answer is known (it runs under the lock after
// every enqueue and every finished capture).
func (sh *shooter) claimableLocked(want int) bool {
	taken := map[string]bool{}
	n := 0
	for _, c := range sh.queue {
		if sh.ownersFreeLocked(c, taken) {
			if n++; n > want {
				return true
			}
			for _, o := range c.owners {
				taken[o] = true
			}
		}
	}
	return false
}

// nextLocked is the index of the oldest capture none of whose owners has a
// capture running, or -1.
func (sh *shooter) nextLocked() int {
	for i, c := range sh.queue {
		if sh.ownersFreeLocked(c, nil) {
			return i
		}
	}
	return -1
}

// ownersFreeLocked: none of c's owners has a capture running, nor is in
// taken (owners already counted).
func (sh *shooter) ownersFreeLocked(c capture, taken map[string]bool) bool {
	for _, o := range c.owners {
		if sh.active[o] > 0 || taken[o] {
			return false
		}
	}
	return true
}

// work captures queued sites, oldest first among those whose owners have
// no capture running, until none may start.
func (sh *shooter) work() {
	defer sh.wg.Done()
	for {
		sh.mu.Lock()
		i := -1
		if !sh.closed {
			i = sh.nextLocked()
		}
		if i < 0 {
			sh.running--
			sh.mu.Unlock()
			return
		}
		c := sh.queue[i]
		sh.queue = slices.Delete(sh.queue, i, i+1)
		for _, o := range c.owners {
			sh.queued[o]--
			sh.active[o]++
		}
		sh.inCapture++
		sh.mu.Unlock()
		err := sh.captureStale(sh.ctx, sh.pool, c.url)
		sh.mu.Lock()
		sh.inCapture--
		delete(sh.pending, c.url)
		for _, o := range c.owners {
			if sh.active[o]--; sh.active[o] == 0 {
				delete(sh.active, o)
			}
			if sh.queued[o] == 0 {
				delete(sh.queued, o)
			}
		}
		sh.recordLocked(c.url, err)
		sh.dispatchLocked() // this owner's next capture, or another's a worker left for
		sh.mu.Unlock()
	}
}

// capture is one site waiting for its screenshot, with the owners it
// counts against.
type capture struct {
	url    string
	owners []string
}

// ownersOf is whom a site's captures count against: its registrable domain
// (wildcard DNS gives any number of names under one) and each address it
// resolves to, an IPv6 address by its /64 (one server on many ports or
// names is one owner). An address literal is its own domain.
func ownersOf(host string, addrs []netip.Addr) []string {
	owners := []string{"site " + weburl.Site(host)}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = append(addrs, a)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		k := "addr " + identity.AddressKey(a.String(), identity.DefaultIPv6Prefix)
		if !seen[k] {
			seen[k] = true
			owners = append(owners, k)
		}
	}
	return owners
}

func hostOf(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.Trim(u.Hostname(), "[]")
}

// captureForDeepScan captures url on the paid pool for a paid deep scan,
// which waits for it to link the screenshot, and returns the link's query
// (empty when there is none). A fresh capture that a free scan made is
// linked as it is; otherwise the paid capture is kept apart from the free
// store, under a random name only the report links (paidShotKey), so the
// free /api/screenshot never serves what only a payment made. Its outcome
// counts for the site like a background capture's.
func (sh *shooter) captureForDeepScan(ctx context.Context, url string) (query string) {
	if sh.paid == nil {
		return ""
	}
	if fresh, _ := sh.storedFresh(ctx, url); fresh {
		return "url=" + neturl.QueryEscape(url)
	}
	name := newShotName()
	err := sh.capture(ctx, sh.paid, url, paidShotKey(name))
	sh.mu.Lock()
	sh.recordLocked(url, err)
	sh.mu.Unlock()
	if err != nil {
		return ""
	}
	return "url=" + neturl.QueryEscape(url) + "&shot=" + name
}

// newShotName is the random name of a paid capture: 128 bits, base64url.
func newShotName() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// paidShotKey is where a paid capture is stored: a key no URL normalises
// to, so the free screenshots never reach it.
func paidShotKey(name string) string { return "paid\x00" + name }

// validShotName reports a name newShotName could have made.
func validShotName(s string) bool {
	if len(s) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// storedFresh reports whether a screenshot younger than the TTL is stored
// under key; an error is a store that did not answer.
func (sh *shooter) storedFresh(ctx context.Context, key string) (bool, error) {
	sctx, cancel := context.WithTimeout(ctx, screenshotStoreDeadline)
	defer cancel()
	old, err := sh.shots.Get(sctx, key)
	switch {
	case err == nil:
		return time.Since(old.CapturedAt) < sh.ttl, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, errStoreSilent
}

// captureStale is a background capture: url's screenshot on pool, unless a
// fresh one is stored. It returns why it stored none (nil when it did or
// need not).
func (sh *shooter) captureStale(ctx context.Context, pool *browser.Pool, url string) error {
	if fresh, err := sh.storedFresh(ctx, url); fresh || err != nil {
		return err // a capture that could not be kept is not taken
	}
	return sh.capture(ctx, pool, url, url)
}

// capture stores a screenshot of url taken on pool under key. It returns
// why it stored none.
func (sh *shooter) capture(ctx context.Context, pool *browser.Pool, url, key string) error {
	if pool.Health().State == "unavailable" {
		return browser.ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, sh.deadline)
	defer cancel()
	sh.taken.Add(1)
	png, err := pool.Screenshot(ctx, url, browser.ScreenshotOptions{})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && !errors.Is(err, browser.ErrCrashed) {
			return browser.ErrTimeout // the capture's deadline, whatever the browser was doing
		}
		return err
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), screenshotStoreDeadline)
	defer wcancel()
	if err := sh.shots.Put(wctx, key, png, time.Now(), sh.ttl); err != nil {
		return errStoreSilent
	}
	return nil
}

// errStoreSilent: the state store did not answer around a capture.
var errStoreSilent = errors.New("the state store did not answer")

// recordLocked keeps the outcome of url's capture: a success forgets the
// site; a failure remembers it as missing until its back-off ends. Nothing
// is remembered when there is nothing to retry (no Chromium) or the service
// is shutting down.
func (sh *shooter) recordLocked(url string, err error) {
	switch {
	case err == nil:
		if _, ok := sh.missing[url]; ok {
			delete(sh.missing, url)
			sh.nMissing.Store(int64(len(sh.missing)))
		}
	case errors.Is(err, browser.ErrUnavailable), errors.Is(err, browser.ErrClosed), errors.Is(err, context.Canceled):
	case errors.Is(err, browser.ErrCrashed), errors.Is(err, browser.ErrBusy), errors.Is(err, browser.ErrStart), errors.Is(err, errStoreSilent):
		sh.markMissingLocked(url, missed{retryAt: sh.now().Add(retryBackoff), why: err.Error()})
	default:
		why := err.Error()
		if !isBrowserError(err) {
			why = "the browser reported an error"
		}
		sh.markMissingLocked(url, missed{retryAt: sh.now().Add(sh.backoff), why: why})
	}
}

// isBrowserError: err is one of the pool's sentinels, whose text is safe to
// show.
func isBrowserError(err error) bool {
	for _, known := range []error{browser.ErrTimeout, browser.ErrTooHeavy, browser.ErrBlocked, browser.ErrLoad, browser.ErrTooLarge, browser.ErrInvalidURL, browser.ErrInvalidOptions} {
		if errors.Is(err, known) {
			return true
		}
	}
	return false
}

func (sh *shooter) markMissingLocked(url string, m missed) {
	if _, ok := sh.missing[url]; !ok && len(sh.missing) >= missingEntries {
		for k := range sh.missing { // forget an arbitrary site: its next fresh scan captures it
			delete(sh.missing, k)
			break
		}
	}
	sh.missing[url] = m
	sh.nMissing.Store(int64(len(sh.missing)))
}

// capturing reports a capture of url queued or running.
func (sh *shooter) capturing(url string) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.pending[url]
}

// lastFailure is why url's last capture failed and when it is tried again,
// while its back-off runs.
func (sh *shooter) lastFailure(url string) (missed, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m, ok := sh.missing[url]
	return m, ok && m.why != "" && sh.now().Before(m.retryAt)
}

// close drops the queue, cancels the captures in flight (a screenshot is not
// worth delaying a shutdown), waits for them and stops both browsers.
func (sh *shooter) close() {
	sh.mu.Lock()
	sh.closed = true
	sh.queue = nil
	sh.mu.Unlock()
	sh.stop()
	sh.wg.Wait()
	if sh.pool != nil {
		sh.pool.Close()
	}
	if sh.paid != nil {
		sh.paid.Close()
	}
}

// health is the browser's entry in /healthz: the background pool, the
// capture queue, and the paid pool under "paid". Chromium being absent is a
// state of the component, not an outage of the service.
func (sh *shooter) health() string {
	if sh.pool == nil {
		return `{"state":"disabled","restarts":0}`
	}
	sh.mu.Lock()
	waiting := len(sh.queue)
	sh.mu.Unlock()
	out := poolHealth(sh.pool.Health())
	out = out[:len(out)-1] + `,"captures_waiting":` + strconv.Itoa(waiting)
	if sh.paid != nil {
		out += `,"paid":` + poolHealth(sh.paid.Health())
	}
	return out + "}"
}

func poolHealth(h browser.Health) string {
	return `{"state":"` + h.State + `","restarts":` + strconv.Itoa(h.Restarts) + `,"in_flight":` + strconv.Itoa(h.InFlight) + `,"queued":` + strconv.Itoa(h.Queued) + `}`
}

func browserUnavailable() *apierr.Error {
	return &apierr.Error{Status: 503, Code: CodeBrowserUnavailable, RetryAfter: 60,
		Message: "Screenshots need headless Chromium, which this server does not have: install it (apt-get install chromium) or set CHROME_PATH to its binary, then restart the service."}
}

// getScreenshot serves the stored capture of a site. It never scans or
// captures: screenshots are taken after scans.
func (s *Server) getScreenshot(ctx *fasthttp.RequestCtx) {
	u, ok := s.siteQuery(ctx)
	if !ok {
		return
	}
	key := u
	if name := string(ctx.QueryArgs().Peek("shot")); name != "" {
		// A paid deep scan's capture, linked from its report only.
		if !validShotName(name) {
			writeError(ctx, apiErr(400, CodeInvalidURL, "shot: not the name of a screenshot; use the link a deep scan's report gives."))
			return
		}
		key = paidShotKey(name)
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	shot, err := s.store.Screenshots().Get(c, key)
	switch {
	case errors.Is(err, store.ErrNotFound) && key != u:
		writeError(ctx, apiErr(404, CodeNoScreenshot, "No such screenshot is stored: a deep scan's capture is kept for an hour after the scan."))
		return
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
func (s *Server) noScreenshot(u string) *apierr.Error {
	if s.shots.pool == nil || s.shots.pool.Health().State == "unavailable" {
		return browserUnavailable()
	}
	if s.shots.capturing(u) {
		return &apierr.Error{Status: 503, Code: CodeBusy, RetryAfter: 2,
			Message: "The screenshot of this site is being captured or waits its turn in the capture queue; retry after Retry-After seconds."}
	}
	if m, ok := s.shots.lastFailure(u); ok {
		return apiErr(404, CodeNoScreenshot, "No screenshot of this site is stored: its last capture failed ("+m.why+"). A scan of the site captures it again after "+
			m.retryAt.UTC().Format(time.RFC3339)+"; fix the page if it is what failed.")
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
