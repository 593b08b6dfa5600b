package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/engine/fetch"
)

// Config sets the pool's bounds. The zero value is the production default:
// the scanner's address policy (no private addresses, ports 80 and 443), four
// tabs on two cores.
type Config struct {
	// ExecPath is the Chromium binary; empty: CHROME_PATH, then chromium,
	// chromium-browser and google-chrome on the PATH.
	ExecPath string
	// Tabs is how many jobs run at once, and how many fresh tabs are kept
	// warm for them (default 4).
	Tabs int
	// Queue is how many jobs may wait for a tab; one more is refused with
	// ErrBusy (default 4×Tabs).
	Queue int
	// JobTimeout bounds one job from the moment it has a tab (default 30 s).
	JobTimeout time.Duration
	// StartTimeout bounds starting Chromium and preparing a tab (default 20 s).
	StartTimeout time.Duration
	// LoadGrace is how long after DOMContentLoaded a job waits for the load
	// event before it uses the page as it is (a stalled image must not cost
	// the whole deadline; default 5 s).
	LoadGrace time.Duration
	// Settle is how long Render waits after load for the network to go idle,
	// so that content scripts fetch and inject is there (default 3 s).
	Settle time.Duration
	// MaxPageBytes caps what one job downloads, all requests together
	// (default 25 MiB).
	MaxPageBytes int64
	// MaxHTMLBytes caps Rendered.HTML (default 2 MiB).
	MaxHTMLBytes int
	// MaxScreenshotBytes caps a screenshot's PNG (default 8 MiB).
	MaxScreenshotBytes int
	// MemoryLimit is the memory budget of Chromium's process tree, as
	// proportional set size (resident memory with shared pages divided among
	// the processes that share them; plain RSS summed over Chromium's dozen
	// processes counts its binary a dozen times). Over it the browser is
	// restarted (default 2 GiB).
	MemoryLimit int64
	// MemoryInterval is how often the memory is read (default 1 s).
	MemoryInterval time.Duration
	// PingInterval and PingTimeout detect a hung browser: a browser that does
	// not answer a ping within PingTimeout is killed and restarted (defaults
	// 5 s and 10 s).
	PingInterval, PingTimeout time.Duration
	// Policy is the scanner's address policy (engine/fetch); the browser's
	// requests pass the same checks as the fetcher's.
	Policy fetch.AddressPolicy
	// Check, when set, replaces Policy: tests admit exactly their fixture's
	// loopback address and refuse a sentinel on another.
	Check func(netip.AddrPort) error
	// Resolver resolves host names for the proxy (default net.DefaultResolver).
	Resolver Resolver
	// Logf receives operational messages (default: none).
	Logf func(format string, args ...any)
	// Name tells pools apart in those messages ("browser paid: …"); empty:
	// "browser: …".
	Name string

	extraFlags []chromedp.ExecAllocatorOption // tests only
}

func (c *Config) defaults() {
	if c.Tabs <= 0 {
		c.Tabs = 4
	}
	if c.Queue <= 0 {
		c.Queue = 4 * c.Tabs
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.JobTimeout, 30*time.Second)
	def(&c.StartTimeout, 20*time.Second)
	def(&c.LoadGrace, 5*time.Second)
	def(&c.Settle, 3*time.Second)
	def(&c.MemoryInterval, time.Second)
	def(&c.PingInterval, 5*time.Second)
	def(&c.PingTimeout, 10*time.Second)
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = 25 << 20
	}
	if c.MaxHTMLBytes <= 0 {
		c.MaxHTMLBytes = 2 << 20
	}
	if c.MaxScreenshotBytes <= 0 {
		c.MaxScreenshotBytes = 8 << 20
	}
	if c.MemoryLimit <= 0 {
		c.MemoryLimit = 2 << 30
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Check == nil {
		c.Check = policyCheck(c.Policy)
	}
}

// policyCheck adapts the fetcher's policy. Its refusals name the kind of
// address ("a loopback address"), never the address, so they can be shown.
// One check of address and port together: an allow-list entry with a port
// admits that port only.
func policyCheck(p fetch.AddressPolicy) func(netip.AddrPort) error {
	return func(ap netip.AddrPort) error {
		err := p.CheckAddrPort(ap)
		var be *fetch.BlockedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &be) && be.Port != 0:
			return fmt.Errorf("port %d (only 80 and 443 are visited)", ap.Port())
		case errors.As(err, &be) && be.What != "":
			return errors.New(be.What)
		}
		return errors.New("an address the scanner does not visit")
	}
}

// Pool runs browser jobs on one lazily started Chromium. It is safe for
// concurrent use.
type Pool struct {
	cfg   Config
	given Config // as passed to New, for Sibling
	proxy *proxy
	sem   chan struct{}
	done  chan struct{}

	waiting atomic.Int64
	avgJob  atomic.Int64 // moving average of job durations, ns
	quiet   atomic.Bool  // set when Close returns

	mu        sync.Mutex
	inst      *instance
	starting  *startCall
	closed    bool
	restarts  int
	lastCause string

	bg sync.WaitGroup
}

type startCall struct {
	done chan struct{}
	inst *instance
	err  error
}

// New makes a pool. It starts nothing: Chromium starts with the first job.
func New(cfg Config) *Pool {
	given := cfg
	cfg.defaults()
	p := &Pool{
		cfg:   cfg,
		given: given,
		sem:   make(chan struct{}, cfg.Tabs),
		done:  make(chan struct{}),
	}
	// Nothing is logged once Close has returned, whatever chromedp's own
	// goroutines still have to say.
	logf := cfg.Logf
	p.cfg.Logf = func(f string, a ...any) {
		if !p.quiet.Load() {
			if cfg.Name != "" {
				f = strings.Replace(f, "browser:", "browser "+cfg.Name+":", 1)
			}
			logf(f, a...)
		}
	}
	p.proxy = newProxy(cfg.Check, cfg.Resolver, 10*time.Second, cfg.JobTimeout+5*time.Second)
	p.proxy.guard.opaque = cfg.Policy.Opaque
	return p
}

// Sibling makes another pool from the Config p was made with: the same
// binary, bounds and address policy, but a Chromium of its own, its own name
// in log lines, tabs tabs and a queue of queue jobs (0 keeps p's setting).
// Nothing one pool's pages do (a hang, a crash, memory over budget) reaches
// the other's jobs. It starts nothing; the caller closes it.
func (p *Pool) Sibling(name string, tabs, queue int) *Pool {
	cfg := p.given
	cfg.Name = name
	if tabs > 0 {
		cfg.Tabs = tabs
	}
	if queue > 0 {
		cfg.Queue = queue
	}
	return New(cfg)
}

// findExec locates Chromium as documented on Config.ExecPath.
func (p *Pool) findExec() (string, error) {
	for _, c := range []string{p.cfg.ExecPath, os.Getenv("CHROME_PATH")} {
		if c == "" {
			continue
		}
		path, err := exec.LookPath(c)
		if err != nil {
			return "", withDetail(ErrUnavailable, "the configured Chromium path is not an executable file")
		}
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", ErrUnavailable
}

// Health is the component's state for /healthz.
type Health struct {
	// State is "unavailable" (no Chromium), "idle" (no job running; the
	// browser may or may not be started) or "running".
	State string `json:"state"`
	// Message says how to install Chromium when it is unavailable.
	Message string `json:"message,omitempty"`
	// Started reports a running browser process.
	Started bool `json:"started"`
	// Restarts counts browsers replaced after a crash, a hang or memory
	// over budget.
	Restarts    int    `json:"restarts"`
	LastRestart string `json:"last_restart,omitempty"`
	InFlight    int    `json:"in_flight"`
	Queued      int    `json:"queued"`
	Tabs        int    `json:"tabs"`
	// MemoryBytes is the browser process tree's memory (PSS, as for
	// Config.MemoryLimit) at the last reading.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// PID is the running browser's process id (0 when none runs), for an
	// operator reading /proc and for tests that stop or kill it.
	PID int `json:"pid,omitempty"`
}

// Health reports the component's state without starting anything.
func (p *Pool) Health() Health {
	p.mu.Lock()
	in := p.inst
	h := Health{Restarts: p.restarts, LastRestart: p.lastCause, Tabs: p.cfg.Tabs, Queued: int(p.waiting.Load())}
	p.mu.Unlock()
	if in != nil && !in.isDead() {
		h.Started = true
		h.InFlight = int(in.inflight.Load())
		h.MemoryBytes = in.mem.Load()
		h.PID = in.pid
	} else if _, err := p.findExec(); err != nil {
		h.State, h.Message = "unavailable", err.Error()
		return h
	}
	h.State = "idle"
	if h.InFlight > 0 {
		h.State = "running"
	}
	return h
}

// Close stops the browser; jobs in flight fail and later calls return
// ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	in := p.inst
	p.mu.Unlock()
	if in != nil {
		in.kill(ErrClosed)
	}
	p.bg.Wait()
	p.quiet.Store(true)
	return nil
}

// instance returns the running browser, starting one if needed. Concurrent
// callers share one start.
func (p *Pool) instance(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if p.inst != nil && !p.inst.isDead() {
		in := p.inst
		p.mu.Unlock()
		return in, nil
	}
	if p.starting == nil {
		path, err := p.findExec()
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		sc := &startCall{done: make(chan struct{})}
		p.starting = sc
		p.bg.Add(1)
		go func() {
			defer p.bg.Done()
			in, err := p.start(path)
			p.mu.Lock()
			if err == nil && p.closed {
				p.mu.Unlock()
				in.kill(ErrClosed)
				p.mu.Lock()
				in, err = nil, ErrClosed
			}
			if err == nil {
				p.inst = in
			}
			p.starting = nil
			sc.inst, sc.err = in, err
			p.mu.Unlock()
			close(sc.done)
		}()
	}
	sc := p.starting
	p.mu.Unlock()
	select {
	case <-sc.done:
		return sc.inst, sc.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// flags are Chromium's switches. Beyond chromedp's headless defaults: every
// request goes to the guarded proxy (loopback included: without <-loopback>
// Chromium connects to localhost and 127.0.0.0/8 directly), Chromium's own
// resolver maps every name and address but the proxy's to "not found" (a
// second wall: anything that did go around the proxy could reach nothing but
// 127.0.0.1), and what does not go through a proxy is off: QUIC, DNS
// prefetch, background and component networking, and the search preconnect
// and network-time services a fresh profile calls. WebRTC's non-proxied UDP
// is off through the profile (profile.go); the switch below only helps
// older builds, current ones dropped it.
func (p *Pool) flags(path, proxyURL string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,DnsOverHttps,MediaRouter,OptimizationHints,AutofillServerCommunication,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater,PreconnectToSearch,NetworkTimeServiceQuerying"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("proxy-server", proxyURL),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.Flag("deny-permission-prompts", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("window-size", "1280,800"),
		// A page that allocates without end dies alone (its tab crashes)
		// before it costs the whole browser its memory budget.
		chromedp.Flag("js-flags", "--max-old-space-size=512"),
	)
	return append(opts, p.cfg.extraFlags...)
}

func (p *Pool) start(path string) (*instance, error) {
	dir, err := newProfile()
	if err != nil {
		p.cfg.Logf("browser: profile: %v", err)
		return nil, withDetail(ErrStart, "could not create the browser's profile directory")
	}
	// The browser-wide proxy serves the default browser context, which runs
	// no job: it is never armed and refuses everything.
	fallback, err := p.proxy.listen(0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, withDetail(ErrStart, "could not open the browser's proxy port")
	}
	opts := append(p.flags(path, fallback.URL()), chromedp.UserDataDir(dir))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	logf := p.cfg.Logf
	bctx, bcancel := chromedp.NewContext(actx,
		chromedp.WithErrorf(func(f string, a ...any) { logf("browser: chromedp: "+f, a...) }),
		chromedp.WithLogf(func(string, ...any) {}))
	fail := func(detail string) (*instance, error) {
		bcancel()
		acancel()
		killProfile(dir)
		fallback.close()
		return nil, withDetail(ErrStart, detail)
	}
	// The first Do binds the browser's life to bctx, so it gets bctx itself
	// and the start timeout is enforced from outside.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	timer := time.NewTimer(p.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case err := <-started:
		if err != nil {
			p.cfg.Logf("browser: start: %v", err)
			return fail("Chromium exited while starting")
		}
	case <-timer.C:
		return fail("Chromium did not answer within " + p.cfg.StartTimeout.String())
	case <-p.done:
		return fail("the pool is shutting down")
	}
	c := chromedp.FromContext(bctx)
	cctx, ccancel := context.WithTimeout(bctx, p.cfg.StartTimeout)
	_, err = chromedp.CallBrowser(cctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny})
	ccancel()
	if err != nil {
		p.cfg.Logf("browser: deny downloads: %v", err)
		return fail("Chromium did not accept its settings")
	}
	var b [8]byte
	rand.Read(b[:])
	in := &instance{
		p:        p,
		dir:      dir,
		actx:     actx,
		acancel:  acancel,
		bctx:     bctx,
		bcancel:  bcancel,
		fallback: fallback,
		warm:     make(chan *slot, p.cfg.Tabs),
		refill:   make(chan struct{}, 1),
		dead:     make(chan struct{}),
		binding:  "__agentready_" + hex.EncodeToString(b[:]),
	}
	if proc := c.Browser.Process(); proc != nil {
		in.pid = proc.Pid
	}
	in.mem.Store(treePSS(in.pid))
	p.bg.Add(2)
	go in.watch()
	go in.fill()
	in.wantRefill()
	return in, nil
}

// instance is one Chromium process with its warm tabs.
type instance struct {
	p        *Pool
	dir      string // the profile directory, ours to remove
	actx     context.Context
	acancel  context.CancelFunc
	bctx     context.Context
	bcancel  context.CancelFunc
	pid      int
	fallback *endpoint
	binding  string

	warm   chan *slot
	refill chan struct{}

	dead  chan struct{}
	once  sync.Once
	cause error

	mem       atomic.Int64
	inflight  atomic.Int64
	disposing atomic.Int64 // tabs being closed
}

func (in *instance) isDead() bool {
	select {
	case <-in.dead:
		return true
	default:
		return false
	}
}

// kill ends the instance for cause; jobs on it fail with cause, the next job
// starts a new browser.
func (in *instance) kill(cause error) {
	in.once.Do(func() {
		in.cause = cause
		p := in.p
		// The pool's record first: a job that sees in.dead closed and
		// reports the crash must find it in Health.
		p.mu.Lock()
		if p.inst == in {
			p.inst = nil
		}
		if !errors.Is(cause, ErrClosed) {
			p.restarts++
			p.lastCause = cause.Error()
		}
		p.mu.Unlock()
		close(in.dead)
		if !errors.Is(cause, ErrClosed) {
			p.cfg.Logf("browser: restarting: %v", cause)
		}
		p.bg.Add(1)
		go func() {
			defer p.bg.Done()
			in.bcancel()
			in.acancel() // kills the browser process and waits for it
			killProfile(in.dir)
			in.fallback.close()
		}()
	})
}

// watch restarts the browser when it exits, stops answering or grows past
// its memory budget.
func (in *instance) watch() {
	defer in.p.bg.Done()
	cfg := &in.p.cfg
	mem := time.NewTicker(cfg.MemoryInterval)
	defer mem.Stop()
	ping := time.NewTicker(cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-in.dead:
			return
		case <-in.bctx.Done():
			in.kill(withDetail(ErrCrashed, "Chromium exited"))
			return
		case <-mem.C:
			mem := treePSS(in.pid)
			in.mem.Store(mem)
			if mem > cfg.MemoryLimit {
				in.kill(withDetail(ErrCrashed, fmt.Sprintf("Chromium used %d MiB, over its %d MiB memory budget", mem>>20, cfg.MemoryLimit>>20)))
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(in.bctx, cfg.PingTimeout)
			_, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
			cancel()
			if err != nil && !in.isDead() {
				if in.bctx.Err() != nil {
					in.kill(withDetail(ErrCrashed, "Chromium exited"))
				} else {
					in.kill(withDetail(ErrCrashed, "Chromium stopped answering for "+cfg.PingTimeout.String()))
				}
				return
			}
		}
	}
}

func (in *instance) wantRefill() {
	select {
	case in.refill <- struct{}{}:
	default:
	}
}

// fill keeps Tabs fresh tabs ready, so a job pays for navigation and capture
// only. It is the only producer of in.warm, and drains it when the instance
// ends.
func (in *instance) fill() {
	defer in.p.bg.Done()
	defer func() {
		for {
			select {
			case s := <-in.warm:
				s.discard()
			default:
				return
			}
		}
	}()
	for {
		select {
		case <-in.dead:
			return
		case <-in.refill:
		}
		for len(in.warm) < cap(in.warm) && !in.isDead() {
			s, err := in.newSlot(in.bctx)
			if err != nil {
				if !in.isDead() && in.bctx.Err() == nil {
					in.p.cfg.Logf("browser: preparing a tab: %v", err)
				}
				break
			}
			select {
			case in.warm <- s:
			default:
				s.discard()
			}
		}
	}
}

// take gives a job a fresh tab: a warm one, or one made now. The
// replacement is prepared after the job (see run): preparing it during the
// job would compete with the job for the CPU.
func (in *instance) take(ctx context.Context) (*slot, error) {
	select {
	case s := <-in.warm:
		return s, nil
	default:
	}
	return in.newSlot(ctx)
}

// acquire waits for one of the Tabs job places, or refuses at once when the
// queue is full.
func (p *Pool) acquire(ctx context.Context) (func(), error) {
	release := func() { <-p.sem }
	select {
	case p.sem <- struct{}{}:
		return release, nil
	default:
	}
	if p.waiting.Add(1) > int64(p.cfg.Queue) {
		p.waiting.Add(-1)
		return nil, &BusyError{RetryAfter: p.retryAfter()}
	}
	defer p.waiting.Add(-1)
	select {
	case p.sem <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, ErrClosed
	}
}

// retryAfter estimates when a place frees up: the queue ahead, served Tabs at
// a time, at the recent average job duration.
func (p *Pool) retryAfter() time.Duration {
	avg := time.Duration(p.avgJob.Load())
	if avg <= 0 {
		avg = time.Second
	}
	rounds := p.waiting.Load()/int64(p.cfg.Tabs) + 1
	d := time.Duration(rounds) * avg
	d = (d + time.Second - 1).Truncate(time.Second)
	return min(max(d, time.Second), time.Minute)
}

func (p *Pool) recordDuration(d time.Duration) {
	old := p.avgJob.Load()
	if old == 0 {
		p.avgJob.Store(int64(d))
		return
	}
	p.avgJob.Store(old + (int64(d)-old)/8)
}

// checkURL admits only absolute http(s) URLs whose host the guard admits, so
// the common refusal is a clear error before Chromium is involved (the proxy
// still checks every request, redirects and rebinding included).
func (p *Pool) checkURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, ErrInvalidURL
	}
	if u.User != nil {
		return nil, withDetail(ErrInvalidURL, "URLs with a user name or password are not rendered")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	host := u.Hostname()
	g := p.proxy.guard
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.WithZone("")}
	} else if fetch.NonStandardIPv4(host) {
		return nil, withDetail(ErrBlocked, "the host is a number in a non-standard IPv4 notation")
	} else {
		lctx, cancel := context.WithTimeout(ctx, g.timeout)
		addrs, err = g.resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil || len(addrs) == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if g.opaque {
				return nil, withDetail(ErrBlocked, fetch.NotPublic("the host"))
			}
			return nil, withDetail(ErrLoad, "the host name does not resolve")
		}
	}
	n, _ := strconv.Atoi(port)
	var refused error
	for _, a := range addrs {
		if err := g.admit(netip.AddrPortFrom(a, uint16(n))); err != nil {
			refused = err
			continue
		}
		return u, nil
	}
	var r *refusal
	if errors.As(refused, &r) {
		return nil, withDetail(ErrBlocked, r.why)
	}
	return nil, ErrBlocked
}

// run is one job: a place in the queue, a fresh tab in a fresh browser
// context, fn, and the tab thrown away.
func (p *Pool) run(ctx context.Context, rawURL string, fn func(ctx context.Context, s *slot) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	u, err := p.checkURL(ctx, rawURL)
	if err != nil {
		return err
	}
	release, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	// Close waits for jobs in flight (they end quickly once the browser is
	// killed), so nothing they start afterwards outlives it.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.bg.Add(1)
	p.mu.Unlock()
	defer p.bg.Done()
	start := time.Now()
	deadline := start.Add(p.cfg.JobTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	sctx, scancel := context.WithDeadline(ctx, deadline)
	defer scancel()
	in, err := p.instance(sctx)
	if err != nil {
		return p.classify(ctx, err, nil, nil, deadline)
	}
	in.inflight.Add(1)
	defer in.inflight.Add(-1)
	defer in.wantRefill()
	s, err := in.take(sctx)
	if err != nil {
		return p.classify(ctx, err, in, nil, deadline)
	}
	defer s.discard()
	// Actions need the tab's chromedp context; the caller's cancellation and
	// the job deadline are added to it.
	jctx, jcancel := context.WithDeadline(s.ctx, deadline)
	defer jcancel()
	stop := context.AfterFunc(ctx, jcancel)
	defer stop()
	err = fn(jctx, s.prepare(u.String()))
	if err == nil {
		p.recordDuration(time.Since(start))
		return nil
	}
	return p.classify(ctx, err, in, s, deadline)
}

// ownErrors are the package's errors: their text (with its safe detail) may
// reach a caller and a report.
var ownErrors = []error{ErrUnavailable, ErrStart, ErrBusy, ErrCrashed, ErrTimeout, ErrTooHeavy, ErrBlocked, ErrLoad, ErrTooLarge, ErrInvalidURL, ErrInvalidOptions, ErrClosed}

// isOwn reports whether err is (or wraps) one of ownErrors.
func isOwn(err error) bool {
	for _, known := range ownErrors {
		if errors.Is(err, known) {
			return true
		}
	}
	return false
}

// classify turns what went wrong into one of the package's errors. Errors
// from chromedp and the protocol are logged, never returned: their text can
// carry addresses and internals.
func (p *Pool) classify(ctx context.Context, err error, in *instance, s *slot, deadline time.Time) error {
	if isOwn(err) {
		return err
	}
	if in != nil && time.Now().Before(deadline) && ctx.Err() == nil {
		// An error before the deadline that is none of ours: the tab may
		// have gone because the browser did, and the watcher may not have
		// seen it yet.
		select {
		case <-in.dead:
		case <-in.bctx.Done():
		case <-time.After(time.Second):
		}
	}
	if in != nil && (in.isDead() || in.bctx.Err() != nil) {
		select {
		case <-in.dead:
		case <-time.After(2 * time.Second):
		}
		if in.isDead() && in.cause != nil {
			if errors.Is(in.cause, ErrClosed) {
				return ErrClosed
			}
			return in.cause
		}
		return withDetail(ErrCrashed, "Chromium exited")
	}
	if s != nil && s.tabCrashed() {
		return withDetail(ErrLoad, "the page crashed its browser tab (it may use too much memory)")
	}
	if ctx.Err() == context.Canceled {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) || !time.Now().Before(deadline) {
		return ErrTimeout
	}
	if errors.Is(err, context.Canceled) {
		return withDetail(ErrLoad, "the page's tab closed before the job finished")
	}
	p.cfg.Logf("browser: job: %v", err)
	return withDetail(ErrLoad, "the browser reported an error while loading the page")
}

// browserPID is the running browser's process id, for tests that kill it.
func (p *Pool) browserPID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		return 0
	}
	return p.inst.pid
}

// Compile-time check that the default resolver satisfies Resolver.
var _ Resolver = net.DefaultResolver
