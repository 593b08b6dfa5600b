package origin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/scanreq"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/connlimit"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/version"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/mcpserver"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/origin/payment"
	"github.com/agentready/agentready/origin/store"
)

// Config configures the origin. Zero fields take the defaults in parentheses.
type Config struct {
	AllowPrivate   bool          // scan loopback/private targets (local testing only)
	CacheTTL       time.Duration // scan cache lifetime (10 min)
	ReportKeep     time.Duration // how long each scan's report stays readable by /api/report (30 days)
	IdempotencyTTL time.Duration // how long a POST response is replayable (24 h)
	Workers        int           // concurrent scans (64: scans wait on the network, not the CPU)
	Queue          int           // scans waiting for a worker before 503 (256)
	Heartbeat      time.Duration // SSE heartbeat interval (10 s)
	MaxBody        int           // request body limit in bytes (64 KiB)
	Version        string
	BaseURL        string              // public base URL; default: from each request's Host
	Allowances     identity.Allowances // daily scans per tier (identity.DefaultAllowances)
	Limiter        ratelimit.Limiter   // default: redis_rate on a Redis store, else in-process GCRA
	Payment        x402.Config         // where paid scans are paid to
	Curated        []string            // sites the MCP showcase features
	Audit          *slog.Logger        // audit log of scan-costing actions (who, what, outcome); nil = none
	EdgeSecret     []byte              // shared with the edge: callers it vouches for (AGENTREADY_EDGE_SECRET)
	// EdgeOnly refuses every request its edge did not sign, but /healthz:
	// an origin reachable from beyond its edges (serve --role origin) would
	// otherwise serve anyone as an anonymous caller that no edge counts
	// against an allowance.
	EdgeOnly      bool
	TokenKeys     token.Keys    // verifies bearer tokens the edge issued (AGENTREADY_TOKEN_KEYS); nil = not checked here
	ReadTimeout   time.Duration // a whole request, headers and body, from its first byte (15 s)
	IdleTimeout   time.Duration // a keep-alive connection waiting for its next request (60 s)
	Browser       *browser.Pool // headless Chromium for background screenshots; nil: none taken. The server closes it on Shutdown
	ScreenshotTTL time.Duration // how long a screenshot is kept and not retaken (1 h)
	// PaidBrowser is the Chromium of paid deep scans (their render and
	// screenshot), never the one anonymous scans' captures run on; nil with
	// Browser set: Browser's sibling with two tabs. The server closes it.
	PaidBrowser *browser.Pool
	// MaxConnsPerIP caps open connections per client address (connlimit.DefaultPerIP);
	// negative: no cap, for an origin behind the edge or a proxy, whose
	// requests all come from a few addresses.
	MaxConnsPerIP int
	CapLoopback   bool // count loopback clients too (tests; off, a proxy on the same host would be capped as one client)
	// IdempotencyLease is how long a key stays held after its request's
	// last renewal (10 s): what a dead holder costs a retrying client.
	IdempotencyLease time.Duration
	// FacilitatorURL is the x402 facilitator that verifies and settles deep
	// scan payments (AGENTREADY_FACILITATOR_URL; payment.DefaultFacilitator).
	FacilitatorURL string
	// FacilitatorPrivate lets the facilitator be on loopback or a private
	// network (one run beside the service, tests).
	FacilitatorPrivate bool
	// Monitors tunes scheduled scans and webhook deliveries (monitor.FromEnv).
	// AllowPrivate above applies to their targets and callbacks too.
	Monitors monitor.Config
}

// Request size limits. The public edge applies the same URL and header
// limits, so a request it admits is never refused here for its size.
const (
	MaxURLBytes    = 8 << 10  // the request target: path and query
	MaxHeaderBytes = 16 << 10 // header fields as the client sent them
	// The edge adds its signed identity headers on the way here.
	originHeaderBytes = MaxHeaderBytes + 4<<10
	// What fasthttp can hold of a request line and headers; a request
	// larger than this cannot be parsed at all (and is answered 431).
	readBufferSize = 32 << 10
)

func (c *Config) defaults() {
	if c.CacheTTL <= 0 {
		c.CacheTTL = 10 * time.Minute
	}
	if c.ReportKeep <= 0 {
		c.ReportKeep = 30 * 24 * time.Hour
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = 24 * time.Hour
	}
	if c.IdempotencyLease <= 0 {
		c.IdempotencyLease = 10 * time.Second
	}
	if c.Workers <= 0 {
		c.Workers = 64
	}
	if c.Queue <= 0 {
		c.Queue = 256
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 10 * time.Second
	}
	if c.MaxBody <= 0 {
		c.MaxBody = scanreq.MaxBody
	}
	if c.Version == "" { // /healthz's, and the MCP server's serverInfo and card
		c.Version = version.String()
	}
	if c.Allowances == (identity.Allowances{}) {
		c.Allowances = identity.DefaultAllowances
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 15 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = connlimit.DefaultPerIP
	}
}

// Server is the origin HTTP server.
type Server struct {
	cfg     Config
	store   store.Backend
	scans   *scanner
	m       *metrics
	srv     *fasthttp.Server
	base    context.Context
	stopAll context.CancelFunc
	closing chan struct{}
	once    sync.Once
	mcp     *mcpserver.Server
	mcpHTTP fasthttp.RequestHandler
	shots   *shooter

	gateway      *payment.Gateway
	monitors     *monitor.Service
	monitorsOnce sync.Once
	monitorsDone chan struct{} // closed when the monitor loops have stopped
}

// New builds a server over a store backend and a scanner.
func New(cfg Config, st store.Backend, sc *engine.Scanner) *Server {
	cfg.defaults()
	base, cancel := context.WithCancel(context.Background())
	m := newMetrics()
	s := &Server{cfg: cfg, store: st, m: m, base: base, stopAll: cancel, closing: make(chan struct{})}
	s.scans = &scanner{cfg: cfg, engine: sc, cache: st.ScanCache(), history: st.History(), pool: newPool(cfg.Workers, cfg.Queue, m), m: m, base: base}
	s.scans.flights.running = &s.scans.persist
	if cfg.Limiter == nil {
		if r, ok := st.(*store.Redis); ok {
			cfg.Limiter = ratelimit.NewRedis(r.Client())
		} else {
			cfg.Limiter = ratelimit.NewLocal()
		}
		s.cfg.Limiter = cfg.Limiter
	}
	var trusted []string
	if cfg.BaseURL != "" {
		trusted = append(trusted, strings.TrimSuffix(cfg.BaseURL, "/"))
	}
	ms, err := mcpserver.New(mcpserver.Deps{
		ValidateURL: func(raw string) (string, error) {
			u, aerr := s.scans.validateURL(raw)
			if aerr != nil {
				return "", errors.New(strings.TrimPrefix(aerr.Message, "url: "))
			}
			return u, nil
		},
		// The same scan path as /api/scan: MCP callers share its flights and cache.
		Scan: func(ctx context.Context, url string) (*report.Result, error) {
			res, err := s.scans.scan(ctx, url, false, nil)
			if err != nil {
				return nil, err
			}
			return res.result()
		},
		Fetch: sc.FetchDocument,
		Charge: func(ctx context.Context, c identity.Caller, n int) (*ratelimit.Result, error) {
			return s.cfg.Limiter.AllowN(ctx, "scan:"+c.Key(), ratelimit.PerDay(s.cfg.Allowances.For(c.Tier)), n)
		},
		History: st.History(), Curated: cfg.Curated, Payment: cfg.Payment, Version: cfg.Version,
		Gateway: func(ctx context.Context, url, base string, pay mcpserver.DeepScanPayment) (int, map[string]string, []byte) {
			req := payment.Request{URL: url, Base: base, Receipt: pay.Receipt, IdempotencyKey: pay.IdempotencyKey}
			if len(pay.Payload) > 0 {
				// The MCP transport carries the PaymentPayload as JSON; the
				// gateway reads it as the HTTP headers carry it.
				var v struct {
					X402Version int `json:"x402Version"`
				}
				_ = json.Unmarshal(pay.Payload, &v)
				h := base64.StdEncoding.EncodeToString(pay.Payload)
				if v.X402Version == 1 {
					req.V1 = h
				} else {
					req.V2 = h
				}
			}
			if req.Base == "" {
				req.Base = strings.TrimSuffix(cfg.BaseURL, "/")
			}
			a := s.gateway.Serve(context.WithValue(ctx, baseKey{}, req.Base), req)
			return a.Status, a.Header, a.Body
		},
		Audit: func(ctx context.Context, c identity.Caller, tool string, urls []string, outcome string) {
			s.audit(c, "mcp."+tool, strings.Join(urls, " "), outcome)
		},
	}, trusted...)
	if err != nil {
		panic(fmt.Sprintf("building the MCP server: %v", err)) // a bug in the tool definitions
	}
	s.mcp, s.mcpHTTP = ms, fasthttpadaptor.NewFastHTTPHandler(ms.Handler())
	if s.cfg.PaidBrowser == nil && s.cfg.Browser != nil {
		s.cfg.PaidBrowser = s.cfg.Browser.Sibling("paid", paidBrowserTabs, paidBrowserQueue)
	}
	s.shots = newShooter(s)
	s.gateway = s.newGateway(sc)
	mc := cfg.Monitors
	mc.AllowPrivate = mc.AllowPrivate || cfg.AllowPrivate
	mc.Policy = s.outboundPolicy(false) // callbacks pass the scanner's guard: its allow-list, its wording
	s.monitors = monitor.New(mc, monitor.Deps{
		Store: st.Monitors(),
		ValidateURL: func(raw string) (string, error) {
			u, aerr := s.scans.validateURL(raw)
			if aerr != nil {
				return "", errors.New(strings.TrimSuffix(strings.TrimPrefix(aerr.Message, "url: "), "."))
			}
			return u, nil
		},
		// Scheduled runs scan afresh through the one scan path (they join a
		// flight already scanning the site), from the monitor service's own
		// share of workers (monitor.Config.Workers).
		Scan: func(ctx context.Context, url string) (*report.Result, []byte, error) {
			res, err := s.scans.scan(ctx, url, true, nil)
			if err != nil {
				aerr := toAPIError(err)
				if aerr.HTTPStatus() >= 500 {
					return nil, nil, fmt.Errorf("%w: %s", monitor.ErrTryLater, aerr.Message)
				}
				return nil, nil, errors.New(aerr.Message)
			}
			r, err := res.result()
			return r, res.raw, err
		},
	})
	s.monitorsDone = make(chan struct{})
	s.scans.shoot = s.shots.afterScan
	s.srv = &fasthttp.Server{
		Handler:            s.Handle,
		Name:               "agentready",
		MaxRequestBodySize: cfg.MaxBody,
		ReadBufferSize:     readBufferSize,
		ReadTimeout:        cfg.ReadTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		CloseOnShutdown:    true,
		// Belt and braces: protocolError never shows fasthttp's text, and
		// with this it carries no request bytes either.
		SecureErrorLogMessage: true,
		Logger:                quietLogger{},
		ErrorHandler:          s.protocolError,
	}
	return s
}

// outboundPolicy is the address policy of what the origin itself calls
// (webhook receivers, the payment facilitator): the scanner's, so its
// allow-list and its wording (Opaque) hold there too, admitting private
// addresses with AllowPrivate or private.
func (s *Server) outboundPolicy(private bool) fetch.AddressPolicy {
	p := s.scans.engine.Options().Fetch.Policy
	p.AllowPrivate = p.AllowPrivate || s.cfg.AllowPrivate || private
	return p
}

// protocolError answers a request fasthttp could not read. Each kind of
// failure gets a fixed message: fasthttp's own error text quotes the request
// bytes (bearer tokens, cookies, the edge's identity headers), so it must
// never reach the client.
func (s *Server) protocolError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var e *apierr.Error
	if errors.Is(err, fasthttp.ErrBodyTooLarge) || errors.As(err, &small) {
		drain(ctx.Conn())
	}
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && string(ctx.Path()) == "/api/mcp":
		mcpTooLarge(ctx)
		s.m.request("/api/mcp", ctx.Response.StatusCode())
		return
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		e = apiErr(413, CodePayloadTooLarge, "The request body is larger than the "+strconv.Itoa(s.cfg.MaxBody>>10)+" KiB limit; send {\"url\": \"…\"} only.")
	case errors.As(err, &small):
		e = apiErr(431, CodeHeadersTooLarge, "The request line and headers together are larger than "+strconv.Itoa(readBufferSize>>10)+" KiB, so the request could not be read; keep the url under "+strconv.Itoa(MaxURLBytes>>10)+" KiB and the headers under "+strconv.Itoa(MaxHeaderBytes>>10)+" KiB (large cookies, long tokens), then retry.")
	case isTimeout(err):
		e = apiErr(408, CodeRequestTimeout, "The request did not arrive within "+s.cfg.ReadTimeout.String()+" (a stalled or very slow upload); send the whole request at once, then retry.")
	default:
		e = apiErr(400, CodeBadRequest, "The request is not valid HTTP/1.1 (malformed request line, header or chunked body); check the client, then retry.")
	}
	writeError(ctx, e)
	s.m.request("protocol", e.HTTPStatus())
}

// drain reads and drops what the client is still sending of a request
// refused for its size, until it pauses for 50 ms (at most 1 MiB, 1 s):
// fasthttp closes the connection after the answer, and closing with unread
// data makes the kernel reset it, so the client would see a broken pipe
// instead of the 413 or 431.
func drain(c net.Conn) {
	end := time.Now().Add(time.Second)
	buf := make([]byte, 32<<10)
	for total := 0; total < 1<<20 && time.Now().Before(end); {
		c.SetReadDeadline(minTime(end, time.Now().Add(50*time.Millisecond)))
		n, err := c.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &t) && t.Timeout())
}

// sizeError refuses a request whose URL or headers exceed the limits the
// edge also applies. fasthttp reads up to readBufferSize, so these are
// checked here, with an answer that says which part is too long.
func sizeError(ctx *fasthttp.RequestCtx) *apierr.Error {
	if len(ctx.Request.Header.RequestURI()) > MaxURLBytes {
		return apiErr(414, CodeURLTooLong, "The request URL is longer than "+strconv.Itoa(MaxURLBytes>>10)+" KiB; give the site as a short url (its home page, not a long deep link), then retry.")
	}
	if len(ctx.Request.Header.RawHeaders()) > originHeaderBytes {
		return apiErr(431, CodeHeadersTooLarge, "The request headers are larger than "+strconv.Itoa(MaxHeaderBytes>>10)+" KiB; drop large cookies or other oversized headers, then retry.")
	}
	return nil
}

// Serve accepts connections on ln until Shutdown, at most MaxConnsPerIP
// from one (non-loopback, unless CapLoopback) client address at a time.
func (s *Server) Serve(ln net.Listener) error {
	s.startMonitors()
	return s.srv.Serve(connlimit.Wrap(ln, s.cfg.MaxConnsPerIP, s.cfg.CapLoopback))
}

// Shutdown stops accepting connections, lets in-flight requests (and their
// scans) finish until ctx expires, then cancels what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() { close(s.closing) })
	err := s.srv.ShutdownWithContext(ctx)
	s.stopAll()
	s.monitorsOnce.Do(func() { close(s.monitorsDone) }) // never started: nothing to wait for
	<-s.monitorsDone
	s.scans.persist.Wait() // the store is closed after Shutdown returns
	s.shots.close()
	if err != nil {
		// Give canceled handlers a moment to write their last bytes.
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = s.srv.ShutdownWithContext(c)
	}
	return err
}

// startMonitors runs the scheduled scans and webhook deliveries until
// Shutdown; every origin sharing a store runs them, and the store's leases
// share the work out.
func (s *Server) startMonitors() {
	s.monitorsOnce.Do(func() {
		go func() {
			defer close(s.monitorsDone)
			s.monitors.Run(s.base)
		}()
	})
}

func (s *Server) draining() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// quietLogger drops fasthttp's per-connection noise (clients sending oversized
// bodies, resets); those requests already get an error response.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

type route struct {
	name    string
	methods map[string]func(*fasthttp.RequestCtx)
}

// Handle routes a request.
func (s *Server) Handle(ctx *fasthttp.RequestCtx) {
	if err := sizeError(ctx); err != nil {
		writeError(ctx, err)
		ctx.SetConnectionClose()
		s.m.request("protocol", err.HTTPStatus())
		return
	}
	path := string(ctx.Path())
	// One spelling per path: the edge forwards and signs the canonical one,
	// so "//api/scan", "/api/./scan" or "/api/%73can" comes from elsewhere.
	if orig := ctx.Request.URI().PathOriginal(); string(orig) != path {
		err := apiErr(400, apierr.InvalidPath, "The path is not written in its one canonical form (no empty or dot segments, no percent-encoding); write it as /openapi.json does.")
		writeError(ctx, err)
		s.m.request("protocol", err.HTTPStatus())
		return
	}
	c, err := s.resolveCaller(ctx)
	if err != nil {
		writeError(ctx, err) // resets the response: headers go after it
		if err.Code == CodeInvalidToken || err.Code == CodeInsufficientScope {
			ctx.Response.Header.Set("WWW-Authenticate", token.Challenge(s.baseURL(ctx), string(err.Code)))
		}
		s.m.request("identity", err.HTTPStatus())
		return
	}
	if s.cfg.EdgeOnly && len(ctx.Request.Header.Peek(identity.HeaderCaller)) == 0 && path != "/healthz" {
		err := apiErr(401, CodeInvalidIdentity, "This origin answers only requests its edge signed; send requests to the service's public address (its edge), not to an origin.")
		writeError(ctx, err)
		s.m.request("identity", err.HTTPStatus())
		return
	}
	ctx.SetUserValue(callerKey, c)
	r := s.route(path)
	h, ok := r.methods[string(ctx.Method())]
	if !ok && string(ctx.Method()) == "HEAD" {
		h, ok = r.methods["GET"]
	}
	switch {
	case r.methods == nil:
		writeError(ctx, apiErr(404, CodeNotFound, "No endpoint at this path; see /openapi.json for the API."))
	case !ok:
		allow := make([]string, 0, len(r.methods))
		for m := range r.methods {
			allow = append(allow, m)
		}
		writeError(ctx, apiErr(405, CodeMethodNotAllowed, "This method is not supported here; use "+strings.Join(sortStrings(allow), " or ")+"."))
		ctx.Response.Header.Set("Allow", strings.Join(sortStrings(allow), ", "))
	case r.name == "/api/scan" && s.draining():
		writeError(ctx, &apierr.Error{Status: 503, Code: CodeShuttingDown, Message: "This server is shutting down and takes no new scans; retry (another instance will answer).", RetryAfter: 1})
	default:
		h(ctx)
	}
	if ctx.UserValue(streamingKey) == nil { // a stream counts itself when it ends, with its outcome
		s.m.request(r.name, ctx.Response.StatusCode())
	}
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}

func (s *Server) route(path string) route {
	get := func(name string, h func(*fasthttp.RequestCtx)) route {
		return route{name, map[string]func(*fasthttp.RequestCtx){"GET": h}}
	}
	switch {
	case path == "/api/scan":
		return route{"/api/scan", map[string]func(*fasthttp.RequestCtx){"GET": s.getScan, "POST": s.postScan}}
	case path == "/healthz":
		return get("/healthz", s.healthz)
	case path == "/openapi.json":
		return get("/openapi.json", s.openapi)
	case path == x402.GatewayPath:
		return route{x402.GatewayPath, map[string]func(*fasthttp.RequestCtx){"POST": s.scanGateway}}
	case path == "/api/screenshot":
		return get("/api/screenshot", s.getScreenshot)
	case path == "/api/report":
		return get("/api/report", s.getReport)
	case path == "/api/latest":
		return get("/api/latest", s.getLatest)
	case path == "/api/showcase":
		return get("/api/showcase", s.getShowcase)
	case path == "/api/mcp":
		h := s.serveMCP
		// Every method reaches the MCP handler, so a wrong one is refused as a JSON-RPC error too.
		return route{"/api/mcp", map[string]func(*fasthttp.RequestCtx){"POST": h, "GET": h, "DELETE": h, "PUT": h, "PATCH": h, "OPTIONS": h}}
	case path == "/.well-known/mcp.json", path == "/.well-known/mcp/server-card", path == "/.well-known/mcp/server-card.json":
		return get("/.well-known/mcp.json", s.serverCard)
	}
	switch path {
	case "/api/badge", "/api/agent/token", "/.well-known/api-catalog", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource":
		return route{path, map[string]func(*fasthttp.RequestCtx){"GET": edgeOnly, "HEAD": edgeOnly, "POST": edgeOnly}}
	}
	if r, ok := s.monitorRoute(path); ok {
		return r
	}
	return route{name: "other"}
}

// edgeOnly answers the endpoints the edge serves itself (badges, tokens,
// discovery documents) when a request reaches the origin directly.
func edgeOnly(ctx *fasthttp.RequestCtx) {
	writeError(ctx, apiErr(421, CodeServedByEdge, "This endpoint is served by the edge, not the origin; call the service's public address (agentready serve, or the Worker)."))
}

// audit records one scan-costing action with the acting caller, for operators
// (abuse handling, support) and for callers asking what their key did.
func (s *Server) audit(c identity.Caller, action, target, outcome string) {
	if s.cfg.Audit == nil {
		return
	}
	s.cfg.Audit.Info("agent action", "action", action, "actor_type", string(c.Tier), "client_id", c.Key(), "target", target, "outcome", outcome)
}

// baseURL is the public base of the service for this request.
func (s *Server) baseURL(ctx *fasthttp.RequestCtx) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimSuffix(s.cfg.BaseURL, "/")
	}
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	return scheme + "://" + string(ctx.Host())
}

const callerKey = "agentready.caller"

// caller is who is asking, as Handle resolved it once for the request.
func (s *Server) caller(ctx *fasthttp.RequestCtx) identity.Caller {
	if c, ok := ctx.UserValue(callerKey).(identity.Caller); ok {
		return c
	}
	return identity.Caller{Tier: identity.Anonymous, Subject: ctx.RemoteIP().String()}
}

// resolveCaller decides who is asking: the caller the edge vouched for with a
// signed identity, else the holder of a valid bearer token, else an anonymous
// caller keyed by the socket's address. Identity headers the edge did not sign
// are refused. Tokens are verified here too (when TokenKeys is set), so a
// token is only as good as its signature wherever it lands: behind the edge
// it must belong to the caller the edge vouched for.
func (s *Server) resolveCaller(ctx *fasthttp.RequestCtx) (identity.Caller, *apierr.Error) {
	edge, vouched := identity.Caller{}, false
	if len(ctx.Request.Header.Peek(identity.HeaderCaller)) > 0 {
		get := func(k string) string { return string(ctx.Request.Header.Peek(k)) }
		signed := identity.Request{Method: string(ctx.Method()), Path: string(ctx.Path()), Query: string(ctx.URI().QueryString()), Body: ctx.PostBody()}
		var nonce string
		if edge, _, nonce, vouched = identity.Verify(s.cfg.EdgeSecret, get, signed, time.Now()); !vouched {
			return identity.Caller{}, apiErr(401, CodeInvalidIdentity, "The request carries caller-identity headers that were not signed by this service's edge for this request; send requests through the edge, without X-Agentready-Caller headers.")
		}
		// Each signature is accepted once, by any origin sharing the store:
		// headers captured between the edge and an origin cannot be sent again.
		rctx, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
		first, err := s.store.Replays().First(rctx, nonce, 2*identity.MaxSkew)
		cancel()
		switch {
		case err != nil:
			return identity.Caller{}, stateUnavailable(err)
		case !first:
			return identity.Caller{}, apiErr(401, CodeInvalidIdentity, "The request's caller identity was already used: the edge signs each request once. Send requests through the edge.")
		}
	}
	if auth := string(ctx.Request.Header.Peek("Authorization")); auth != "" && len(s.cfg.TokenKeys) > 0 {
		claims, err := s.cfg.TokenKeys.Authenticate(auth, s.baseURL(ctx), token.Scope, time.Now())
		switch {
		case errors.Is(err, token.ErrNotBearer):
			return identity.Caller{}, apiErr(401, CodeInvalidToken, "Send the token as Authorization: Bearer <token>.")
		case errors.Is(err, token.ErrScope):
			return identity.Caller{}, apiErr(403, CodeInsufficientScope, "The bearer token does not grant "+token.Scope+"; request a token with scope "+token.Scope+" from POST /api/agent/token.")
		case err != nil:
			return identity.Caller{}, apiErr(401, CodeInvalidToken, "The bearer token is not valid ("+err.Error()+"); request a new one from POST /api/agent/token.")
		case vouched && edge.Tier == identity.Token && (edge.Subject != claims.Subject || edge.Minter != "" && edge.Minter != claims.Minter):
			return identity.Caller{}, apiErr(401, CodeInvalidIdentity, "The caller identity does not match the bearer token; send requests through the edge.")
		case !vouched:
			return identity.Caller{Tier: identity.Token, Subject: claims.Subject, Minter: claims.Minter}, nil
		case edge.Tier == identity.Token:
			edge.Minter = claims.Minter // the token's own claim, verified here (an edge of an earlier release passes none)
		}
	}
	if vouched {
		return edge, nil
	}
	// Reached directly (no edge): keyed as the edge keys addresses, an IPv6
	// client by its /64.
	return identity.Caller{Tier: identity.Anonymous, Subject: identity.AddressKey(ctx.RemoteIP().String(), identity.DefaultIPv6Prefix)}, nil
}

func (s *Server) serveMCP(ctx *fasthttp.RequestCtx) {
	c := s.caller(ctx)
	h := &ctx.Request.Header
	h.Del(mcpserver.HeaderCallerTier)
	h.Del(mcpserver.HeaderCallerSubject)
	h.Del(mcpserver.HeaderBaseURL)
	h.Set(mcpserver.HeaderCallerTier, string(c.Tier))
	h.Set(mcpserver.HeaderCallerSubject, c.Subject)
	h.Set(mcpserver.HeaderBaseURL, s.baseURL(ctx))
	s.mcpHTTP(ctx)
}

// mcpTooLarge answers an /api/mcp body the HTTP server refused for its size
// the way the MCP handler answers one: a JSON-RPC error object.
func mcpTooLarge(ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	ctx.SetStatusCode(fasthttp.StatusRequestEntityTooLarge)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(mcpserver.TooLargeResponse())
}

// MCPHandler is the MCP endpoint as a net/http handler (benchmarks, embedding).
func (s *Server) MCPHandler() http.Handler { return s.mcp.Handler() }

func (s *Server) serverCard(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	if s.cfg.BaseURL == "" {
		// Its URLs come from the request's Host, which the caller chose: no
		// shared cache may hand them to a request for another Host.
		ctx.Response.Header.Set("Cache-Control", "private, max-age=3600")
		ctx.Response.Header.Set("Vary", "Host")
	} else {
		ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
	}
	ctx.SetBody(s.mcp.Card(s.baseURL(ctx)))
}

func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	c, cancel := context.WithTimeout(s.base, time.Second)
	defer cancel()
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if err := s.store.Ping(c); err != nil {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter(err)))
		ctx.SetStatusCode(503)
		ctx.SetBodyString(`{"status":"degraded","store":"` + s.store.Name() + `","error":"state store does not answer","browser":` + s.shots.health() + `}`)
		return
	}
	v, _ := json.Marshal(s.cfg.Version) // version.String() unless a caller set its own
	ctx.SetBodyString(`{"status":"ok","store":"` + s.store.Name() + `","version":` + string(v) + `,"browser":` + s.shots.health() + `}`)
}

// MetricsHandler answers GET /metrics with this origin's counters in the
// Prometheus text format. It is for a listener of its own
// (AGENTREADY_METRICS_ADDR), never the public one: the counters say how busy
// the service is and which routes fail, which is the operator's to know.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/metrics":
			http.Error(w, "Not found: the metrics are at /metrics.", http.StatusNotFound)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Use GET or HEAD.", http.StatusMethodNotAllowed)
		default:
			var b bytes.Buffer
			s.m.write(&b)
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(b.Bytes())
		}
	})
}
