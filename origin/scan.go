package origin

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
)

// pool bounds running scans (workers) and waiting ones (queue).
type pool struct {
	slots chan struct{}
	queue int64
	m     *metrics
}

func newPool(workers, queue int, m *metrics) *pool {
	return &pool{slots: make(chan struct{}, workers), queue: int64(queue), m: m}
}

var errOverloaded = errors.New("overloaded")

// acquire waits for a worker; it refuses at once when the queue is full.
func (p *pool) acquire(ctx context.Context) (release func(), err error) {
	select {
	case p.slots <- struct{}{}:
	default:
		if p.m.queued.Add(1) > p.queue {
			p.m.queued.Add(-1)
			return nil, errOverloaded
		}
		select {
		case p.slots <- struct{}{}:
			p.m.queued.Add(-1)
		case <-ctx.Done():
			p.m.queued.Add(-1)
			return nil, ctx.Err()
		}
	}
	p.m.running.Add(1)
	return func() {
		p.m.running.Add(-1)
		<-p.slots
	}, nil
}

// scanned is one scan's outcome as the API serves it. A cache hit keeps only
// the JSON; the decoded result is built on first use, so the hot path (a cached
// GET) never decodes.
type scanned struct {
	decoded   *report.Result
	raw       []byte // the result's JSON, as cached
	scannedAt time.Time
	cached    bool
	kept      bool // read from the kept reports (keptReports), not the scan cache
}

func (s *scanned) result() (*report.Result, error) {
	if s.decoded == nil {
		var r report.Result
		if err := json.Unmarshal(s.raw, &r); err != nil {
			return nil, err
		}
		s.decoded = &r
	}
	return s.decoded, nil
}

// flights coalesces concurrent scans of one URL: every caller asking for a
// URL while its scan runs (JSON, stream, MCP; fresh or not) waits for that one
// scan, so a site is fetched once however many clients ask at the same time.
type flights struct {
	mu    sync.Mutex
	calls map[string]*call
	// running counts flight goroutines, so Shutdown can wait for the
	// writes they make after the scan ends (history, cache).
	running *sync.WaitGroup
}

// call is one running scan. Its events are kept, so a caller that joins late
// still sees the whole sequence from the first event, then the rest live.
type call struct {
	mu     sync.Mutex
	events []engine.Event
	more   chan struct{} // closed (and replaced) when an event is added
	done   chan struct{} // closed when res and err are final
	res    *scanned
	err    error

	cancel  context.CancelFunc
	waiters int // guarded by flights.mu
}

func (c *call) publish(e engine.Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	close(c.more)
	c.more = make(chan struct{})
	c.mu.Unlock()
}

// follow hands onEvent every event of c in order, from the first, until the
// scan ends or ctx is done. Each caller follows from its own goroutine, so a
// slow one never holds up the scan or the others.
func (c *call) follow(ctx context.Context, onEvent func(engine.Event)) (*scanned, error) {
	next := 0
	for {
		c.mu.Lock()
		evs, more := c.events[next:], c.more
		next = len(c.events)
		c.mu.Unlock()
		for _, e := range evs {
			onEvent(e)
		}
		select {
		case <-c.done:
			// Every event was added before done closed: deliver what arrived
			// since the snapshot above, then the outcome.
			c.mu.Lock()
			evs = c.events[next:]
			c.mu.Unlock()
			for _, e := range evs {
				onEvent(e)
			}
			return c.res, c.err
		case <-more:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// do joins the scan of key, starting it with run if none is running, and
// waits for its outcome, passing every event to onEvent (nil: none wanted).
//
// A caller whose ctx ends leaves; the scan goes on while anyone else waits.
// When the last caller leaves, the scan is canceled and nothing is cached: the
// only callers that leave early are streams whose client went away (a JSON
// request cannot notice its client hanging up), and finishing a scan nobody
// waits for would spend the target site's requests and a worker on nobody.
// The canceled scan leaves the table at once, so a caller arriving next
// starts a new one instead of inheriting the cancellation.
func (f *flights) do(ctx, base context.Context, key string, run func(context.Context, func(engine.Event)) (*scanned, error), onEvent func(engine.Event)) (*scanned, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*call{}
	}
	c, joined := f.calls[key]
	if !joined {
		runCtx, cancel := context.WithCancel(base)
		c = &call{more: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
		f.calls[key] = c
		if f.running != nil {
			f.running.Add(1) // here, not in the goroutine: Shutdown may be waiting already
		}
		go func() {
			if f.running != nil {
				defer f.running.Done()
			}
			res, err := run(runCtx, c.publish)
			cancel()
			f.mu.Lock()
			c.res, c.err = res, err
			close(c.done)
			if f.calls[key] == c {
				delete(f.calls, key)
			}
			f.mu.Unlock()
		}()
	}
	c.waiters++
	f.mu.Unlock()

	var res *scanned
	var err error
	if onEvent != nil {
		res, err = c.follow(ctx, onEvent)
	} else {
		select {
		case <-c.done:
			res, err = c.res, c.err
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c.waiters--
	if err != nil && ctx.Err() != nil && c.waiters == 0 {
		select {
		case <-c.done:
		default:
			c.cancel()
			if f.calls[key] == c {
				delete(f.calls, key)
			}
		}
	}
	return res, err
}

// waiting is how many callers wait for the running scan of key.
func (f *flights) waiting(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.calls[key]; ok {
		return c.waiters
	}
	return 0
}

// scanner is the service the handlers share.
type scanner struct {
	cfg     Config
	engine  *engine.Scanner
	cache   store.ScanCache
	history store.History
	pool    *pool
	m       *metrics
	flights flights
	hot     hotCache
	extras  hotCache        // what /api/report adds to a report (reportExtra), by site, with the report's time
	persist sync.WaitGroup  // flights and their cache writes
	base    context.Context // canceled when the server gives up on draining
	// shoot, when set, is told of every scan, fresh or from the cache (the
	// screenshot capture; for a cached one it only reads an in-memory set).
	shoot func(url string, cached bool)
}

// validateURL applies the API's input rules before any network activity.
func (s *scanner) validateURL(raw string) (string, *apierr.Error) {
	if strings.TrimSpace(raw) == "" {
		return "", apiErr(400, CodeMissingURL, "The url parameter is required: give a domain such as example.com or a full http(s) URL.")
	}
	u, err := engine.NormalizeURL(raw)
	if err != nil {
		return "", apiErr(400, CodeInvalidURL, "url: "+err.Error()+".")
	}
	// A literal address the scanner would refuse is refused now, before any
	// network activity; an allow-list entry with a port admits its port.
	// Not for the hosted service (an Opaque policy): there the scan's dial
	// refuses it in the words it has for a name that leads inside or does
	// not resolve, so that no answer tells one from the others.
	policy := s.engine.Options().Fetch.Policy
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !s.cfg.AllowPrivate && !policy.Opaque && policy.CheckAddr(a) != nil {
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
		if err := policy.CheckAddrPort(netip.AddrPortFrom(a, uint16(port))); err != nil {
			// What kind of address it is and how to allow it, without
			// repeating it (answers never echo the request), and the
			// README's paragraph on scanning your own machine rather
			// than the error table.
			e := apiErr(400, CodeInvalidURL, "url: "+policy.ExplainTarget(err)+".")
			e.Docs = apierr.LocalScansDocs
			return "", e
		}
	}
	return u.String(), nil
}

// hotCache keeps the most requested reports in memory for a few seconds, in
// front of the store (a Redis round trip per badge or API hit adds up).
// Entries live at most hotTTL, so origins sharing Redis converge quickly.
type hotCache struct {
	mu sync.Mutex
	m  map[string]hotEntry
}

type hotEntry struct {
	raw     []byte
	at      time.Time
	expires time.Time
}

const (
	hotTTL     = 5 * time.Second
	hotEntries = 1024
)

func (h *hotCache) get(url string, now time.Time) (hotEntry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.m[url]
	if !ok || now.After(e.expires) {
		return hotEntry{}, false
	}
	return e, true
}

func (h *hotCache) put(url string, e hotEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]hotEntry{}
	}
	if len(h.m) >= hotEntries {
		for k := range h.m { // drop an arbitrary entry; the store still has it
			delete(h.m, k)
			break
		}
	}
	h.m[url] = e
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// cached returns a cached scan that is still within the cache lifetime. err
// is set only when the store does not answer: a miss is not an error, but
// scanning on through a store outage would cache nothing and let every
// caller hammer the target site.
func (s *scanner) cached(ctx context.Context, url string) (*scanned, bool, error) {
	now := time.Now()
	if e, ok := s.hot.get(url, now); ok {
		return &scanned{raw: e.raw, scannedAt: e.at, cached: true}, true, nil
	}
	raw, at, err := s.cache.Get(ctx, url)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil, false, nil
	}
	s.hot.put(url, hotEntry{raw: raw, at: at, expires: minTime(now.Add(hotTTL), at.Add(s.cfg.CacheTTL))})
	return &scanned{raw: raw, scannedAt: at, cached: true}, true, nil
}

// run scans url with a worker, reporting progress to publish, and stores the
// result. It runs once per flight, whoever asked.
func (s *scanner) run(ctx context.Context, url string, publish func(engine.Event)) (*scanned, error) {
	release, err := s.pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	s.m.cacheMisses.Add(1)
	start := time.Now()
	res, err := s.engine.Scan(ctx, url, publish)
	release() // storing below needs no worker
	if err != nil {
		s.m.scansFailed.Add(1)
		return nil, err
	}
	s.m.scanDuration(time.Since(start))
	// The report says what changed since the site's scan before, read from
	// the history before this one joins it. Neither the read nor the write
	// below can fail the scan: without the history the report only lacks
	// previous, and the showcase and the series miss this run.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	sum := res.Summary()
	series, serr := s.history.Series(wctx, res.URL, true)
	if before, ok := lastBefore(series, res.Timestamp); ok {
		p := report.Compare(before, res)
		res.Previous = &p
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	// History is written before anyone is answered (the hot cache below
	// answers too), so a caller never sees a scan that the showcase and
	// the site's series do not know yet. It costs one store write per
	// scan, not per caller. /api/report's additions are made now, from
	// the series read above, while the result needs no decoding.
	e := store.HistoryEntry{URL: res.URL, Score: sum.Score, Grade: sum.Grade, Level: sum.Level, LevelName: sum.LevelName, ScannedAt: sum.Timestamp, Checks: sum.Checks}
	if err := s.history.Record(wctx, e); err == nil && serr == nil {
		s.keepExtra(url, res.Timestamp, makeExtra(append(series, e), res))
	}
	s.hot.put(url, hotEntry{raw: raw, at: res.Timestamp, expires: minTime(time.Now().Add(hotTTL), res.Timestamp.Add(s.cfg.CacheTTL))})
	// The shared cache is written off the answer's path: until it lands the
	// hot cache answers repeats here, and another origin merely scans again.
	s.persist.Add(1) // the flight holds one already, so this cannot race Shutdown's Wait
	go func() {
		defer s.persist.Done()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.cache.Put(wctx, url, raw, res.Timestamp, s.cfg.CacheTTL)
		// Kept far longer than the cache, for /report's shared and
		// permanent links (keptReports).
		_ = s.kept().put(wctx, url, raw, res.Timestamp)
	}()
	if s.shoot != nil {
		s.shoot(url, false)
	}
	return &scanned{decoded: res, raw: raw, scannedAt: res.Timestamp}, nil
}

// lastBefore is the summary of the newest outcome of series scanned at or
// before at (another origin may have recorded a later scan meanwhile),
// when it kept its checks: without them nothing can be compared.
func lastBefore(series []store.HistoryEntry, at time.Time) (report.Summary, bool) {
	for i := len(series) - 1; i >= 0; i-- {
		if e := series[i]; !e.ScannedAt.After(at) {
			return report.Summary{Timestamp: e.ScannedAt, Score: e.Score, Grade: e.Grade, Level: e.Level, LevelName: e.LevelName, Checks: e.Checks}, e.Checks != nil
		}
	}
	return report.Summary{}, false
}

// scan is the one way every transport scans: url from the cache (unless
// fresh), else from the flight that is scanning it (joined, or started).
// onEvent, when not nil, sees every progress event of a live scan from the
// first, even when this caller joined late; a cached answer has none (the
// caller replays it from the result).
func (s *scanner) scan(ctx context.Context, url string, fresh bool, onEvent func(engine.Event)) (*scanned, error) {
	if !fresh {
		sc, ok, err := s.cached(ctx, url)
		if err != nil {
			return nil, err
		}
		if ok {
			s.m.cacheHits.Add(1)
			if s.shoot != nil {
				s.shoot(url, true)
			}
			return sc, nil
		}
	}
	return s.flights.do(ctx, s.base, url, func(ctx context.Context, publish func(engine.Event)) (*scanned, error) {
		return s.run(ctx, url, publish)
	}, onEvent)
}

// toAPIError maps scan failures to responses.
func toAPIError(err error) *apierr.Error {
	var se *apierr.Error
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return stateUnavailable(err)
	case errors.Is(err, errOverloaded):
		return &apierr.Error{Status: 503, Code: CodeOverloaded, Message: "Every scan worker is busy and the queue is full; retry in a few seconds.", RetryAfter: 5}
	case errors.As(err, &se) && se.Code == apierr.SiteUnreachable:
		return &apierr.Error{Status: 422, Code: CodeSiteUnreachable, Message: se.Message + ". Check that the site is up and public, then retry.", Docs: se.Docs, Err: err}
	case errors.As(err, &se) && se.Code == apierr.InvalidURL:
		return apiErr(400, CodeInvalidURL, "url: "+se.Message+".")
	case errors.Is(err, context.Canceled), errors.As(err, &se) && se.Code == apierr.ScanCanceled:
		return apiErr(503, CodeScanCanceled, "The scan was canceled before it finished (the client went away or the server is shutting down); retry.")
	}
	// A bug: the cause's own text (a library's message) is not for the caller.
	return apiErr(500, CodeInternal, "The scan failed unexpectedly (a bug in the scanner); retry, and report the URL if it keeps failing.")
}
