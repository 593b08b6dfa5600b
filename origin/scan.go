package origin

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"

	"github.com/agentready/agentready/apierr"
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

// flight coalesces concurrent scans of one URL. The shared scan is canceled
// only when every caller waiting for it has gone.
type flight struct {
	mu    sync.Mutex
	calls map[string]*call
}

type call struct {
	done    chan struct{}
	res     *scanned
	err     error
	waiters int
	cancel  context.CancelFunc
}

// scanner is the service the handlers share.
type scanner struct {
	cfg     Config
	engine  *engine.Scanner
	cache   store.ScanCache
	history store.History
	pool    *pool
	m       *metrics
	flights flight
	hot     hotCache
	persist sync.WaitGroup  // cache and history writes in flight
	base    context.Context // canceled when the server gives up on draining
	// shoot, when set, is told of every fresh scan (the screenshot capture).
	shoot func(url string)
}

// validateURL applies the API's input rules before any network activity.
func (s *scanner) validateURL(raw string) (string, *APIError) {
	if strings.TrimSpace(raw) == "" {
		return "", apiErr(400, CodeMissingURL, "The url parameter is required: give a domain such as example.com or a full http(s) URL.")
	}
	u, err := engine.NormalizeURL(raw)
	if err != nil {
		return "", apiErr(400, CodeInvalidURL, "url: "+err.Error()+".")
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !s.cfg.AllowPrivate {
		if err := s.engine.Options().Fetch.Policy.CheckAddr(a); err != nil {
			return "", apiErr(400, CodeInvalidURL, "url: "+u.Hostname()+" is not a public address; the scanner only scans public sites.")
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

// run scans url with a worker and caches the result.
func (s *scanner) run(ctx context.Context, url string) (*scanned, error) {
	release, err := s.pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.execute(ctx, url, nil)
}

// execute scans url (the caller holds a worker), reporting progress to onEvent, and caches the result.
func (s *scanner) execute(ctx context.Context, url string, onEvent func(engine.Event)) (*scanned, error) {
	s.m.cacheMisses.Add(1)
	start := time.Now()
	res, err := s.engine.Scan(ctx, url, onEvent)
	if err != nil {
		s.m.scansFailed.Add(1)
		return nil, err
	}
	s.m.scanDuration(time.Since(start))
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	// Persisting is off the response path (a bbolt write waits for fsync); the
	// in-memory hot cache answers repeats at once, and concurrent callers share
	// this scan through the flight group anyway.
	s.hot.put(url, hotEntry{raw: raw, at: res.Timestamp, expires: minTime(time.Now().Add(hotTTL), res.Timestamp.Add(s.cfg.CacheTTL))})
	s.persist.Add(1)
	go func() {
		defer s.persist.Done()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.cache.Put(wctx, url, raw, res.Timestamp, s.cfg.CacheTTL)
		_ = s.history.Record(wctx, store.HistoryEntry{URL: res.URL, Score: res.Score.Value, Grade: res.Score.Grade, Level: res.CurrentLevel, LevelName: res.Score.LevelName, ScannedAt: res.Timestamp})
	}()
	if s.shoot != nil {
		s.shoot(url)
	}
	return &scanned{decoded: res, raw: raw, scannedAt: res.Timestamp}, nil
}

// scan serves url from the cache or from one shared run.
func (s *scanner) scan(ctx context.Context, url string, fresh bool) (*scanned, error) {
	if !fresh {
		sc, ok, err := s.cached(ctx, url)
		if err != nil {
			return nil, err
		}
		if ok {
			s.m.cacheHits.Add(1)
			return sc, nil
		}
	}
	s.flights.mu.Lock()
	if s.flights.calls == nil {
		s.flights.calls = map[string]*call{}
	}
	c, joined := s.flights.calls[url]
	if !joined {
		runCtx, cancel := context.WithCancel(s.base)
		c = &call{done: make(chan struct{}), cancel: cancel}
		s.flights.calls[url] = c
		go func() {
			c.res, c.err = s.run(runCtx, url)
			cancel()
			s.flights.mu.Lock()
			delete(s.flights.calls, url)
			s.flights.mu.Unlock()
			close(c.done)
		}()
	}
	c.waiters++
	s.flights.mu.Unlock()
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		s.flights.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			c.cancel()
		}
		s.flights.mu.Unlock()
		return nil, ctx.Err()
	}
}

// toAPIError maps scan failures to responses.
func toAPIError(err error) *APIError {
	var se *engine.ScanError
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return stateUnavailable(err)
	case errors.Is(err, errOverloaded):
		return &APIError{Status: 503, Code: CodeOverloaded, Message: "Every scan worker is busy and the queue is full; retry in a few seconds.", RetryAfter: 5}
	case errors.As(err, &se) && se.Code == apierr.SiteUnreachable:
		return apiErr(422, CodeSiteUnreachable, se.Message+". Check that the site is up and public, then retry.")
	case errors.As(err, &se) && se.Code == apierr.InvalidURL:
		return apiErr(400, CodeInvalidURL, "url: "+se.Message+".")
	case errors.Is(err, context.Canceled), errors.As(err, &se) && se.Code == apierr.ScanCanceled:
		return apiErr(503, CodeScanCanceled, "The scan was canceled before it finished (the client went away or the server is shutting down); retry.")
	}
	// A bug: the cause's own text (a library's message) is not for the caller.
	return apiErr(500, CodeInternal, "The scan failed unexpectedly (a bug in the scanner); retry, and report the URL if it keeps failing.")
}
