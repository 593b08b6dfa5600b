package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/internal/version"
)

// Config holds the fetch policy shared by every scan of a Client.
type Config struct {
	UserAgent      string
	Origin         string        // sent as the Origin header so CORS can be judged without preflights
	RequestTimeout time.Duration // per request, including reading the body
	MaxBody        int64         // default body cap, after decompression
	// MaxScanBytes bounds all the bodies one Session keeps; later bodies are
	// cut. SharedBodyBytes bounds what all Sessions of the Client keep beyond
	// their first FreeScanBytes each. See budget.go.
	MaxScanBytes    int64
	SharedBodyBytes int64
	FreeScanBytes   int64
	MaxRedirects    int
	PerHost         int // concurrent requests to one host over HTTP/1.x (HTTP/2 shares one connection)
	Policy          AddressPolicy
	// TLS, when set, is the base TLS client configuration: tests and
	// benchmarks trust their own certificate with it. nil: system roots.
	TLS *tls.Config
	// Resolver, when set, replaces DNS for host names (tests show rebinding
	// without a DNS server). Every address it returns still passes Policy.
	Resolver Resolver
}

// UserAgent is the scanner's User-Agent: agentready, the build's version
// (internal/version, as /healthz and `agentready version` say it), and the
// page about the bot.
func UserAgent() string {
	return "agentready/" + version.String() + " (+https://agentready.dev/bot; agent-readiness scanner)"
}

// Defaults are the values docs/check-rules.md fixes.
func Defaults() Config {
	return Config{
		UserAgent:      UserAgent(),
		Origin:         "https://agentready.dev",
		RequestTimeout: 5 * time.Second,
		MaxBody:        2 << 20,
		// A large real site keeps about 8 MiB (a 2 MiB homepage, OpenAPI
		// document and sitemap, five 512 KiB scripts); an ordinary one under
		// 256 KiB. The shared pool holds sixteen large scans at once, and
		// 256 hostile scans stay under 1 GB of resident memory
		// (docs/benchmarks.md).
		MaxScanBytes:    16 << 20,
		SharedBodyBytes: 128 << 20,
		FreeScanBytes:   256 << 10,
		MaxRedirects:    5,
		PerHost:         8,
	}
}

// Client owns the connection pool; it is safe for concurrent use by many scans.
type Client struct {
	cfg    Config
	dialer *guardedDialer
	pool   *pool // body memory shared by every session

	mu  sync.Mutex
	gen *generation // the transport new sessions use
}

// sessionsPerTransport is how many sessions share one http.Transport before
// new ones get a fresh one. A Transport keeps, for every host it dialled and
// never got a reusable connection to (a refused, blocked, unreachable or
// unresolvable site), the request's wait for an idle connection until
// another request to that host comes (net/http's idleConnWait, which "may
// be kept arbitrarily long": golang/go#62227): a survey, or the service,
// scanning ever new hosts grew by 1–5 KB per such site without end
// (docs/benchmarks.md, "Survey"). A transport retired after this many
// sessions is dropped, with what it kept, once its last session closes. A
// scan's requests share connections within the scan; only the rare reuse
// across scans of one host is lost at a turnover.
const sessionsPerTransport = 256

// generation is one Transport and the sessions that use it.
type generation struct {
	t        *http.Transport
	sessions int  // sessions started on it
	live     int  // of which not closed yet
	retired  bool // no new session starts on it
}

// NewClient builds a Client; zero fields of cfg take their defaults.
func NewClient(cfg Config) *Client {
	d := Defaults()
	if cfg.UserAgent == "" {
		cfg.UserAgent = d.UserAgent
	}
	if cfg.Origin == "" {
		cfg.Origin = d.Origin
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = d.RequestTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = d.MaxBody
	}
	if cfg.MaxScanBytes <= 0 {
		cfg.MaxScanBytes = d.MaxScanBytes
	}
	if cfg.SharedBodyBytes <= 0 {
		cfg.SharedBodyBytes = d.SharedBodyBytes
	}
	if cfg.FreeScanBytes <= 0 {
		cfg.FreeScanBytes = d.FreeScanBytes
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = d.MaxRedirects
	}
	if cfg.PerHost <= 0 {
		cfg.PerHost = d.PerHost
	}
	c := &Client{cfg: cfg, dialer: newGuardedDialer(cfg.Policy, cfg.RequestTimeout, cfg.Resolver), pool: newPool(cfg.SharedBodyBytes)}
	c.gen = &generation{t: c.newTransport()}
	return c
}

func (c *Client) newTransport() *http.Transport {
	var tlsConf *tls.Config
	if c.cfg.TLS != nil {
		tlsConf = c.cfg.TLS.Clone()
	}
	return &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf and bypass the address check
		DialContext:            c.dialer.DialContext,
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true, // needed with a custom dialer; TLS still runs over the guarded connection
		TLSHandshakeTimeout:    c.cfg.RequestTimeout,
		ResponseHeaderTimeout:  c.cfg.RequestTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true, // we decompress ourselves, under the body cap
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    c.cfg.PerHost,
		IdleConnTimeout:        30 * time.Second,
		// HTTP/2's defaults let the server send 4 MiB per stream (1 GiB per
		// connection) that we buffer before reading: bound what one connection
		// can park in memory to about one default body cap.
		HTTP2: &http.HTTP2Config{MaxReceiveBufferPerConnection: 2 << 20, MaxReceiveBufferPerStream: 1 << 20},
	}
}

// startSession hands a new session the current transport, turning it over
// after sessionsPerTransport sessions.
func (c *Client) startSession() *generation {
	c.mu.Lock()
	var done *http.Transport
	if c.gen.sessions >= sessionsPerTransport {
		old := c.gen
		old.retired = true
		if old.live == 0 {
			done = old.t
		}
		c.gen = &generation{t: c.newTransport()}
	}
	g := c.gen
	g.sessions++
	g.live++
	c.mu.Unlock()
	if done != nil {
		done.CloseIdleConnections()
	}
	return g
}

// endSession closes a retired transport's connections once its last
// session is done with them; the Transport, and what it kept, then go.
func (c *Client) endSession(g *generation) {
	c.mu.Lock()
	g.live--
	last := g.retired && g.live == 0
	c.mu.Unlock()
	if last {
		g.t.CloseIdleConnections()
	}
}

// Config returns the client's effective configuration.
func (c *Client) Config() Config { return c.cfg }

// CloseIdle releases pooled connections.
func (c *Client) CloseIdle() {
	c.mu.Lock()
	t := c.gen.t
	c.mu.Unlock()
	t.CloseIdleConnections()
}

// Request describes one fetch. Two Requests with the same Key share one round trip.
type Request struct {
	Method     string // GET when empty
	URL        string
	Accept     string
	Header     map[string]string // extra request headers (conditional, MCP)
	Body       []byte
	MaxBody    int64 // 0: the client's default
	NoRedirect bool  // return 3xx responses as they are
	NoOrigin   bool  // omit the Origin header (protocol probes, which servers may reject cross-origin)
	Round      int   // dependent round this request belongs to (1 = needs nothing)
	// ReadSuite marks a request of the read suite (its page sample) or of
	// the profile (the site's declaration): not one of the documents the
	// 48 checks judge. Responses leaves out what only such requests asked
	// for. It is not part of Key, so the read suite and a check asking for
	// the same representation share one request.
	ReadSuite bool
}

// Key identifies the representation a request asks for.
func (r Request) Key() string {
	var b strings.Builder
	m := r.Method
	if m == "" {
		m = http.MethodGet
	}
	b.WriteString(m + " " + r.URL + "\naccept:" + r.Accept)
	pairs := make([]string, 0, len(r.Header))
	for k, v := range r.Header {
		pairs = append(pairs, strings.ToLower(k)+":"+v)
	}
	sort.Strings(pairs)
	for _, p := range pairs {
		b.WriteString("\n" + p)
	}
	if r.NoRedirect {
		b.WriteString("\nnoredirect")
	}
	if r.NoOrigin {
		b.WriteString("\nnoorigin")
	}
	if len(r.Body) > 0 {
		s := sha256.Sum256(r.Body)
		b.WriteString("\nbody:" + hex.EncodeToString(s[:8]))
	}
	return b.String()
}

// Response is what a fetch produced. Err is set when no HTTP response arrived
// (DNS, refused, TLS, timeout, blocked address, redirect limit).
type Response struct {
	RequestURL string
	FinalURL   string
	Status     int
	Header     http.Header
	Body       []byte
	Truncated  bool   // the body is longer than Body (a cap or the budget cut it)
	Err        error  // no HTTP response at all
	BodyErr    error  // the response arrived but its body did not finish (slow, reset, or no memory came free)
	Cut        string // why Body is not the whole body, for people ("" when it is whole)
	Redirects  []string
	Round      int
	Elapsed    time.Duration
}

// OK reports a 2xx answer.
func (r *Response) OK() bool { return r != nil && r.Err == nil && r.Status >= 200 && r.Status < 300 }

// Complete reports a body that arrived whole: not cut by a cap or the budget,
// not stopped by a timeout or a broken connection.
func (r *Response) Complete() bool {
	return r != nil && r.Err == nil && r.Cut == "" && r.BodyErr == nil && !r.Truncated
}

// Found reports a 2xx answer with its whole body that is not a soft 404 (an
// HTML page where a machine-readable document was expected). A document that
// was cut is not judged from its beginning: Cut says why it was not read.
func (r *Response) Found() bool { return r.OK() && r.Complete() && !r.LooksHTML() }

// ContentType is the lower-cased media type without parameters.
func (r *Response) ContentType() string {
	if r == nil || r.Header == nil {
		return ""
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	}
	return mt
}

// LooksHTML reports an HTML answer, by Content-Type or by sniffing the body.
func (r *Response) LooksHTML() bool {
	if r == nil {
		return false
	}
	switch r.ContentType() {
	case "text/html", "application/xhtml+xml":
		return true
	}
	return SniffHTML(r.Body)
}

// SniffHTML reports whether a body starts like an HTML document.
func SniffHTML(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if len(b) > 512 {
		b = b[:512]
	}
	l := bytes.ToLower(b)
	return bytes.HasPrefix(l, []byte("<!doctype html")) || bytes.HasPrefix(l, []byte("<html")) ||
		bytes.HasPrefix(l, []byte("<head")) || bytes.HasPrefix(l, []byte("<body")) ||
		(bytes.HasPrefix(l, []byte("<!--")) && bytes.Contains(l, []byte("<html")))
}

// Record is one HTTP exchange on the wire (each redirect hop is one record).
type Record struct {
	Method string
	URL    string
	Accept string
	Status int
	Round  int
	Proto  string // "HTTP/1.1", "HTTP/2.0"; empty when no response came
	Err    string // a user-facing cause (see Error), never a library's raw text
	// ReadSuite: made only for the read suite or the profile
	// (Request.ReadSuite); false once a check asked for the same thing.
	// Records sets it from owner, the call the record was made for.
	ReadSuite bool
	owner     *call
}

// Session is one scan's view of the network: a request cache and an account.
type Session struct {
	c       *Client
	lease   *lease // its transport
	mu      sync.Mutex
	calls   map[string]*call
	order   []*call
	records []Record
	hosts   map[string]*hostState
	acct    *account // its use of the body budget
}

type call struct {
	done chan struct{}
	resp *Response
	// checked: a request that is not ReadSuite asked for it (under Session.mu).
	checked bool
	// following: it has met a redirect (under Session.mu); see sharedHop.
	following bool
	// reserved: registered by Reserve and not sent yet (under Session.mu).
	reserved bool
}

// Reserve registers a batch of requests before any of them is sent, so
// that one of them redirected onto another while the batch runs shares its
// answer (sharedHop) instead of fetching it again. The caller must then make
// every reserved request with Do: the first Do of a reserved request sends it.
func (s *Session) Reserve(reqs []Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, req := range reqs {
		key := req.Key()
		if c, ok := s.calls[key]; ok {
			c.checked = c.checked || !req.ReadSuite
			continue
		}
		c := &call{done: make(chan struct{}), checked: !req.ReadSuite, reserved: true}
		s.calls[key] = c
		s.order = append(s.order, c)
	}
}

// NewSession starts a fresh per-scan cache.
func (c *Client) NewSession() *Session {
	s := &Session{c: c, calls: map[string]*call{}, hosts: map[string]*hostState{}}
	c.track(s)
	return s
}

// Records returns a copy of every exchange made so far.
func (s *Session) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]Record(nil), s.records...)
	for i := range out {
		if o := out[i].owner; o != nil {
			out[i].ReadSuite = !o.checked
		}
		out[i].owner = nil
	}
	return out
}

// Responses returns every finished response, in the order requests were
// made, but those only the read suite asked for (Request.ReadSuite).
func (s *Session) Responses() []*Response {
	s.mu.Lock()
	var calls []*call
	for _, c := range s.order {
		if c.checked {
			calls = append(calls, c)
		}
	}
	s.mu.Unlock()
	var out []*Response
	for _, c := range calls {
		select {
		case <-c.done:
			out = append(out, c.resp)
		default:
		}
	}
	return out
}

// Rounds is the deepest dependent round any request belonged to.
func (s *Session) Rounds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	max := 0
	for _, r := range s.records {
		if r.Round > max {
			max = r.Round
		}
	}
	return max
}

// Do fetches req once per session; concurrent and later callers with the same
// key get the same Response.
func (s *Session) Do(ctx context.Context, req Request) *Response {
	key := req.Key()
	s.mu.Lock()
	if c, ok := s.calls[key]; ok {
		c.checked = c.checked || !req.ReadSuite
		if c.reserved {
			// Reserved and not sent yet: the first caller sends it.
			c.reserved = false
			s.mu.Unlock()
			c.resp = s.do(ctx, req, c)
			close(c.done)
			return c.resp
		}
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.resp
		case <-ctx.Done():
			return &Response{RequestURL: req.URL, Err: classify(ctx.Err(), hostOf(req.URL), ctx, 0, s.c.cfg.Policy.Opaque), Round: req.Round}
		}
	}
	c := &call{done: make(chan struct{}), checked: !req.ReadSuite}
	s.calls[key] = c
	s.order = append(s.order, c)
	s.mu.Unlock()
	c.resp = s.do(ctx, req, c)
	close(c.done)
	return c.resp
}

// hostState limits concurrency to one origin. Over HTTP/1.x each concurrent
// request needs a connection of its own, so PerHost caps them; over HTTP/2
// they are streams on one connection and the cap would only split a round
// into waves. The protocol is known once the first TLS connection is up, so
// the first https request goes alone and the others wait for its handshake:
// otherwise each would dial and handshake a connection of its own, which the
// HTTP/2 pool then throws away.
type hostState struct {
	slots   chan struct{}
	mu      sync.Mutex
	proto   int  // 0 unknown, 1 HTTP/1.x (or unknown after a failure), 2 HTTP/2
	probing bool // a request is finding out
	known   chan struct{}
}

func (h *hostState) learn(proto int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proto == 0 {
		h.proto = proto
		close(h.known)
	}
}

// protoOf reads the protocol negotiated on a connection by ALPN.
func protoOf(c net.Conn) int {
	if tc, ok := c.(interface{ ConnectionState() tls.ConnectionState }); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
		return 2
	}
	return 1
}

// acquire waits for the right to send a request to u's origin. probe is
// non-nil when this request is the one that finds out the protocol: it must
// report it through learn.
func (s *Session) acquire(ctx context.Context, u *url.URL) (release func(), probe *hostState, err error) {
	key := u.Scheme + "://" + u.Host
	s.mu.Lock()
	h, ok := s.hosts[key]
	if !ok {
		h = &hostState{slots: make(chan struct{}, s.c.cfg.PerHost), known: make(chan struct{})}
		if u.Scheme != "https" {
			h.proto = 1 // no HTTP/2 without TLS (h2c is not offered by web sites)
			close(h.known)
		}
		s.hosts[key] = h
	}
	s.mu.Unlock()
	// A stalled first handshake must not hold the rest of the round for its
	// whole timeout: after probeWait the others dial for themselves.
	probeWait := min(time.Second, s.c.cfg.RequestTimeout/4)
	var waited <-chan time.Time
	for {
		h.mu.Lock()
		proto, probing, known := h.proto, h.probing, h.known
		if proto == 0 && !probing {
			h.probing = true
			probe = h
		}
		h.mu.Unlock()
		if proto == 2 {
			return func() {}, nil, nil
		}
		if proto == 0 && probing {
			if waited == nil {
				timer := time.NewTimer(probeWait)
				defer timer.Stop()
				waited = timer.C
			}
			select {
			case <-known:
				continue
			case <-waited:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		select {
		case h.slots <- struct{}{}:
			return func() { <-h.slots }, probe, nil
		case <-ctx.Done():
			if probe != nil {
				probe.learn(1)
			}
			return nil, nil, ctx.Err()
		}
	}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Hostname()
	}
	return ""
}

func (s *Session) record(r Record) {
	s.mu.Lock()
	s.records = append(s.records, r)
	s.mu.Unlock()
}

// ErrTooManyRedirects is returned when a chain exceeds the redirect limit.
var ErrTooManyRedirects = errors.New("too many redirects")

// testHookSharedWait, when a test sets it, is called as a redirected
// request starts to wait for another request's answer to target.
var testHookSharedWait func(target string)

// sharedHop returns the answer of another request of this session for the
// same representation of target, waiting for it if it is still running, so
// that a redirect onto a page the scan also asks for directly (an llms.txt
// link that redirects to a page the sitemap lists) does not fetch it twice.
// It never waits on a request that has itself met a redirect: a waiting
// request has always met one, so no two requests can wait on each other.
func (s *Session) sharedHop(ctx context.Context, req Request, target string, self *call) *Response {
	if (req.Method != "" && req.Method != http.MethodGet) || req.Body != nil {
		return nil
	}
	hop := req
	hop.URL = target
	key := hop.Key()
	s.mu.Lock()
	self.following = true
	other, ok := s.calls[key]
	if !ok || other == self {
		s.mu.Unlock()
		return nil
	}
	busy := other.following
	s.mu.Unlock()
	if busy {
		select {
		case <-other.done:
		default:
			return nil
		}
	}
	if testHookSharedWait != nil {
		testHookSharedWait(target)
	}
	select {
	case <-other.done:
		return other.resp
	case <-ctx.Done():
		return nil
	}
}

func (s *Session) do(ctx context.Context, req Request, self *call) *Response {
	start := time.Now()
	resp := &Response{RequestURL: req.URL, Round: req.Round}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.RequestTimeout)
	defer cancel()
	limit := req.MaxBody
	if limit <= 0 {
		limit = s.c.cfg.MaxBody
	}
	current := req.URL
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	body := req.Body
	for hop := 0; ; hop++ {
		u, err := url.Parse(current)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			msg := "the URL is not an absolute http(s) URL"
			if hop > 0 {
				msg = "the page redirects to a URL that is not an absolute http(s) URL"
			}
			resp.Err = &Error{Kind: KindInvalidURL, msg: msg, Err: err}
			break
		}
		release, probe, err := s.acquire(ctx, u)
		if err != nil {
			fe := classify(err, u.Hostname(), parent, s.c.cfg.RequestTimeout, s.c.cfg.Policy.Opaque)
			resp.Err = fe
			s.record(Record{Method: method, URL: current, Accept: req.Accept, Round: req.Round, owner: self, Err: "not sent: " + fe.Error()})
			resp.Elapsed = time.Since(start)
			return resp
		}
		rctx := ctx
		if probe != nil {
			rctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { probe.learn(protoOf(i.Conn)) }})
		}
		hr, err := http.NewRequestWithContext(rctx, method, current, bytes.NewReader(body))
		if err != nil {
			release()
			if probe != nil {
				probe.learn(1)
			}
			resp.Err = &Error{Kind: KindInvalidURL, msg: "the URL cannot be requested", Err: err}
			break
		}
		if body == nil {
			hr.Body = nil
		}
		hr.Header.Set("User-Agent", s.c.cfg.UserAgent)
		if !req.NoOrigin {
			hr.Header.Set("Origin", s.c.cfg.Origin)
		}
		hr.Header.Set("Accept-Encoding", "gzip, br, deflate")
		if req.Accept != "" {
			hr.Header.Set("Accept", req.Accept)
		} else {
			hr.Header.Set("Accept", "*/*")
		}
		for k, v := range req.Header {
			hr.Header.Set(k, v)
		}
		hresp, err := s.lease.gen.t.RoundTrip(hr)
		if probe != nil {
			// Without a connection (DNS, refused, blocked) the protocol stays
			// unknown: fall back to HTTP/1.x limits rather than probe serially.
			probe.learn(1)
		}
		if err != nil {
			release()
			fe := classify(err, u.Hostname(), parent, s.c.cfg.RequestTimeout, s.c.cfg.Policy.Opaque)
			s.record(Record{Method: method, URL: current, Accept: req.Accept, Round: req.Round, owner: self, Err: fe.Error()})
			resp.Err = fe
			break
		}
		s.record(Record{Method: method, URL: current, Accept: req.Accept, Status: hresp.StatusCode, Round: req.Round, Proto: hresp.Proto, owner: self})
		loc := hresp.Header.Get("Location")
		if !req.NoRedirect && isRedirect(hresp.StatusCode) && loc != "" {
			io.Copy(io.Discard, io.LimitReader(hresp.Body, 64<<10))
			hresp.Body.Close()
			release()
			next, err := u.Parse(loc)
			if err != nil {
				resp.Err = &Error{Kind: KindBadRedirect, msg: "the page redirects to a Location that is not a valid URL", Err: err}
				break
			}
			if hop+1 > s.c.cfg.MaxRedirects {
				resp.Err = &Error{Kind: KindRedirects, msg: fmt.Sprintf("the page redirects too many times (more than %d)", s.c.cfg.MaxRedirects), Err: ErrTooManyRedirects}
				break
			}
			resp.Redirects = append(resp.Redirects, next.String())
			current = next.String()
			if hresp.StatusCode == http.StatusSeeOther || ((hresp.StatusCode == 301 || hresp.StatusCode == 302) && method == http.MethodPost) {
				method, body = http.MethodGet, nil
			}
			if method == http.MethodGet && body == nil {
				if shared := s.sharedHop(ctx, req, current, self); shared != nil {
					out := *shared
					out.RequestURL, out.Round = req.URL, req.Round
					out.Redirects = append(resp.Redirects, shared.Redirects...)
					out.Elapsed = time.Since(start)
					return &out
				}
			}
			continue
		}
		resp.FinalURL = current
		resp.Status = hresp.StatusCode
		resp.Header = hresp.Header
		s.readBody(ctx, hresp, limit, resp, start)
		hresp.Body.Close()
		release()
		break
	}
	resp.Elapsed = time.Since(start)
	return resp
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// Origin is the Origin header this session sends.
func (s *Session) Origin() string { return s.c.cfg.Origin }
