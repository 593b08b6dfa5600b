// Package stack assembles the service: by default the whole of it in one
// process, the origin on a private loopback port and the edge in front of it
// on the public address; or one half of it per process (Role), an origin on
// its own address or an edge in front of several origins, for deployments
// with more than one of each (deploy/, docs/deploy.md). `agentready serve`
// and the end-to-end tests both use it.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/native"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/connlimit"
	"github.com/agentready/agentready/internal/edgehost"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/origin/payment"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/wasm"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Role is what one process runs: the whole service, or one half of it.
type Role string

const (
	RoleAll    Role = "all"    // edge and origin in one process (the default)
	RoleEdge   Role = "edge"   // the edge only, in front of Options.Origins
	RoleOrigin Role = "origin" // the origin only, on Options.Addr, for edges elsewhere
)

// ParseRole reads a --role / AGENTREADY_ROLE value ("" is RoleAll).
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case "", RoleAll:
		return RoleAll, nil
	case RoleEdge, RoleOrigin:
		return r, nil
	}
	return "", fmt.Errorf("role %q: want all (edge and origin in one process), edge or origin", s)
}

// Options configure a stack.
type Options struct {
	Addr         string // public address of the edge, e.g. 127.0.0.1:8080 (":0" picks a port); the origin's with RoleOrigin
	AllowPrivate bool
	// Allow admits exactly these addresses (and ports) although they are
	// not public, for tests and local runs (AGENTREADY_ALLOW, serve
	// --allow): the scanner, the browser, webhook deliveries and the
	// facilitator all pass it. Without it and AllowPrivate the service is
	// the hosted one, and refusals are worded alike (fetch.AddressPolicy.Opaque).
	Allow        fetch.AllowList
	Store        store.Backend
	Env          func(string) string // AGENTREADY_* settings (os.Getenv)
	Origin       origin.Config       // Limiter, Audit, CacheTTL… (AllowPrivate and EdgeSecret are set here)
	ScanDeadline time.Duration
	// Browser, when set, gives the origin headless Chromium (its address
	// policy is the scanner's): two browsers from this one Config, one for
	// background screenshots and one with two tabs for paid deep scans
	// (origin.Config.PaidBrowser). Nothing starts until a job needs it;
	// without Chromium the component reports itself unavailable.
	Browser *browser.Config
	// EdgeModule, when set, is the edge compiled to WebAssembly (bin/edge.wasm),
	// hosted by wazero in front of the origin; otherwise the edge runs natively.
	EdgeModule []byte
	CacheDir   string // wazero compilation cache
	// The public listener's limits; zero fields take the defaults in
	// parentheses. MaxConnsPerIP also reads AGENTREADY_MAX_CONNS_PER_IP;
	// negative means no cap (behind a reverse proxy every client shares
	// the proxy's address).
	MaxConnsPerIP int           // open connections per client address (connlimit.DefaultPerIP)
	CapLoopback   bool          // count loopback clients too (tests; off, a reverse proxy on the same host would be capped as one client)
	HeaderTimeout time.Duration // request line and headers, from the first byte (10 s)
	BodyTimeout   time.Duration // a request body, beyond HeaderTimeout: the whole request must arrive within their sum (15 s)
	IdleTimeout   time.Duration // a keep-alive connection waiting for its next request (60 s)
	// Role splits the service across processes (default RoleAll). RoleEdge
	// and RoleOrigin need AGENTREADY_TOKEN_KEYS and AGENTREADY_EDGE_SECRET
	// set alike on every process, which then trust each other's tokens and
	// signed identities.
	Role Role
	// Origins are the origins' base URLs an edge (RoleEdge) spreads its
	// requests over, skipping those that refuse connections or fail their
	// health check (edgehost.Balancer).
	Origins []string
	// TrustedProxies are the reverse proxies in front of the edge whose
	// X-Forwarded-For names the caller (proxies.go); also read from
	// AGENTREADY_TRUSTED_PROXIES.
	TrustedProxies []netip.Prefix
	// MetricsAddr is where the origin's Prometheus metrics are served
	// (GET /metrics), on a listener of its own; also read from
	// AGENTREADY_METRICS_ADDR. Empty: no metrics listener. The public
	// listener never serves them (nor does an edge forward them).
	MetricsAddr string
}

func (o *Options) limits() error {
	if o.MaxConnsPerIP == 0 {
		if v := o.Env("AGENTREADY_MAX_CONNS_PER_IP"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n == 0 {
				return fmt.Errorf("AGENTREADY_MAX_CONNS_PER_IP=%q: want a whole number (connections per client address; -1 for no cap)", v)
			}
			o.MaxConnsPerIP = n
		} else {
			o.MaxConnsPerIP = connlimit.DefaultPerIP
		}
	}
	if v := o.Env("AGENTREADY_TRUSTED_PROXIES"); v != "" && o.TrustedProxies == nil {
		p, err := parseTrustedProxies(v)
		if err != nil {
			return err
		}
		o.TrustedProxies = p
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = o.Env("AGENTREADY_METRICS_ADDR")
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 15 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	return nil
}

// Stack is a running service.
type Stack struct {
	URL       string // the public (edge) base URL
	OriginURL string
	// MetricsURL is the metrics listener's /metrics ("" without one:
	// Options.MetricsAddr unset, or RoleEdge, which has no origin to count).
	MetricsURL string
	Origin     *origin.Server
	Edge       http.Handler // the native handler, or the wazero host of the module (nil with RoleOrigin)
	Wasm       bool
	Role       Role
	edgeSrv    *http.Server
	metrics    *http.Server
	host       *wasm.Host
	balancer   *edgehost.Balancer // RoleEdge
	payment    origin.PaymentMode
	ephemeral  bool
	// feePayerMissing: payments are on, but the facilitator did not name a
	// fee payer at start (the edge's 402s then carry none).
	feePayerMissing bool
}

// feePayer asks the configured facilitator for its Solana fee payer ("" when it does not answer in 3 s).
func feePayer(url string, policy fetch.AddressPolicy, network string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	f := payment.NewFacilitator(url, policy, 3*time.Second)
	sup, err := f.Supported(ctx)
	if err != nil {
		return ""
	}
	return sup.FeePayer(network)
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// PaymentMode says whether this service sells deep scans, in one line for
// the operator: the payee, network and facilitator, or why it does not.
func (s *Stack) PaymentMode() string {
	cfg := s.payment
	if cfg.Pay.PayTo == "" {
		return "payments: off (AGENTREADY_PAYTO unset): over the allowance callers get 429 allowance_exhausted, and the paid deep scan answers 503 payments_disabled"
	}
	mode := fmt.Sprintf("payments: on, %s atomic USDC per deep scan to %s on %s, through the facilitator %s", cfg.Pay.Amount(), cfg.Pay.PayTo, cfg.Pay.NetworkID(), cfg.Facilitator)
	if s.feePayerMissing {
		mode += " (it did not name a fee payer at start: the edge's 402s carry none until AGENTREADY_FEE_PAYER is set; the gateway's own 402s ask it each time)"
	}
	return mode
}

// EphemeralKeys reports that token keys were generated for this process only.
func (s *Stack) EphemeralKeys() bool { return s.ephemeral }

// Start runs the origin and the edge.
func Start(o Options) (*Stack, error) {
	if o.Env == nil {
		o.Env = func(string) string { return "" }
	}
	if err := o.limits(); err != nil {
		return nil, err
	}
	cfg, err := edge.FromEnv(o.Env)
	if err != nil {
		return nil, err
	}
	if o.Role == "" {
		o.Role = RoleAll
	}
	if err := o.splitSettings(cfg); err != nil {
		return nil, err
	}
	edgeEnvExtra, feeMissing := map[string]string{}, false
	// The origin's gateway gets the operator's settings as they are: it asks
	// the facilitator for the fee payer itself (and again when it rotates).
	originPayment := cfg.Payment
	if o.Origin.FacilitatorURL == "" {
		o.Origin.FacilitatorURL = payment.FacilitatorOrDefault(o.Env("AGENTREADY_FACILITATOR_URL"))
	}
	o.Origin.FacilitatorPrivate = o.Origin.FacilitatorPrivate || o.Env("AGENTREADY_FACILITATOR_PRIVATE") == "1"
	if cfg.Payment.PayTo != "" && cfg.Payment.FeePayer == "" && o.Role != RoleOrigin {
		// Solana clients cannot build a payment without the facilitator's
		// fee payer, and the edge (which cannot reach the facilitator from
		// WebAssembly) puts it in its 402s only when it is configured: ask
		// the facilitator once now. The gateway asks again for its own 402s.
		fp := o.policy()
		fp.AllowPrivate = fp.AllowPrivate || o.Origin.FacilitatorPrivate
		cfg.Payment.FeePayer = feePayer(o.Origin.FacilitatorURL, fp, cfg.Payment.NetworkID())
		feeMissing = cfg.Payment.FeePayer == ""
	}
	st := &Stack{feePayerMissing: feeMissing, Role: o.Role, payment: origin.PaymentMode{Pay: originPayment, Facilitator: o.Origin.FacilitatorURL}}
	if len(cfg.TokenKeys) == 0 {
		cfg.TokenKeys = token.Keys{{ID: "e" + random(3), Secret: []byte(random(32))}}
		st.ephemeral = true
	}
	if len(cfg.IdentitySecret) == 0 {
		cfg.IdentitySecret = []byte(random(32))
	}
	if o.Origin.Limiter == nil {
		if r, ok := o.Store.(*store.Redis); ok {
			o.Origin.Limiter = ratelimit.NewRedis(r.Client())
		} else {
			o.Origin.Limiter = ratelimit.NewLocal()
		}
	}
	o.Origin.AllowPrivate = o.AllowPrivate
	if o.Origin.Monitors.MinCadence == 0 {
		mc, err := monitor.FromEnv(o.Env)
		if err != nil {
			return nil, err
		}
		o.Origin.Monitors = mc
	}
	o.Origin.EdgeSecret = cfg.IdentitySecret
	o.Origin.TokenKeys = cfg.TokenKeys
	o.Origin.Allowances = cfg.Allowances
	o.Origin.Payment = originPayment
	if cfg.Payment.FeePayer != "" && o.Env("AGENTREADY_FEE_PAYER") == "" {
		edgeEnvExtra["AGENTREADY_FEE_PAYER"] = cfg.Payment.FeePayer
	}
	o.Origin.MaxConnsPerIP = -1 // its only clients are edges: the one below, on loopback, or (RoleOrigin) a few others
	if o.Origin.BaseURL == "" {
		o.Origin.BaseURL = cfg.BaseURL
	}
	policy := o.policy()
	sc := engine.New(engine.Options{Deadline: o.ScanDeadline, Fetch: fetch.Config{Policy: policy}})
	if o.Browser != nil && o.Role != RoleEdge {
		bc := *o.Browser
		bc.Policy = policy
		o.Origin.Browser = browser.New(bc)
	}
	// --- role split (deploy/): RoleOrigin serves the origin alone on Addr;
	// RoleEdge builds no origin and reaches the Origins through a balancer.
	if o.Role == RoleOrigin {
		o.Origin.EdgeOnly = true // reachable by the edges, so by others too: it serves only what an edge signed
		st.Origin = origin.New(o.Origin, o.Store, sc)
		if err := st.serveMetrics(o.MetricsAddr); err != nil {
			st.stopOrigin()
			return nil, err
		}
		ln, err := net.Listen("tcp", o.Addr)
		if err != nil {
			st.stopOrigin()
			return nil, fmt.Errorf("cannot listen on %s: %w (is another server using the port?)", o.Addr, err)
		}
		go st.Origin.Serve(ln)
		st.URL = "http://" + ln.Addr().String()
		st.OriginURL = st.URL
		return st, nil
	}
	var dial edgehost.Dialer
	var toOrigin http.RoundTripper // nil: a pool to OriginURL through dial
	if o.Role == RoleEdge {
		if st.balancer, err = edgehost.NewBalancer(o.Origins, edgehost.BalancerOptions{}); err != nil {
			return nil, fmt.Errorf("AGENTREADY_ORIGINS: %w", err)
		}
		st.OriginURL, toOrigin = st.balancer.URL(), st.balancer
	} else {
		st.Origin = origin.New(o.Origin, o.Store, sc)
		if err := st.serveMetrics(o.MetricsAddr); err != nil {
			st.stopOrigin()
			return nil, err
		}
		oln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			st.stopOrigin()
			return nil, err
		}
		go st.Origin.Serve(oln)
		st.OriginURL = "http://" + oln.Addr().String()
		// The edge reaches the origin over an in-memory connection: the same
		// HTTP without loopback TCP's system calls, which were about a third of
		// a forwarded request's CPU. OriginURL stays for other callers.
		mem := fasthttputil.NewInmemoryListener()
		go st.Origin.Serve(mem)
		peer := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} // what the origin sees, as over loopback
		dial = func(context.Context) (net.Conn, error) { return mem.DialWithLocalAddr(peer) }
	}
	// --- end role split
	if o.EdgeModule != nil {
		env := map[string]string{}
		for _, k := range edge.EnvKeys {
			if v := o.Env(k); v != "" {
				env[k] = v
			}
		}
		for k, v := range edgeEnvExtra {
			env[k] = v
		}
		env["AGENTREADY_TOKEN_KEYS"] = keyString(cfg.TokenKeys)
		env["AGENTREADY_EDGE_SECRET"] = string(cfg.IdentitySecret)
		host, err := wasm.New(context.Background(), o.EdgeModule, wasm.Options{OriginURL: st.OriginURL, Dial: dial, Transport: toOrigin, Limiter: o.Origin.Limiter, Env: env, CacheDir: o.CacheDir})
		if err != nil {
			st.stopOrigin()
			return nil, err
		}
		st.Edge, st.Wasm, st.host = host, true, host
	} else if toOrigin != nil {
		u, _ := url.Parse(st.OriginURL)
		st.Edge = edge.New(cfg, native.NewWithTransport(u, o.Origin.Limiter, toOrigin))
	} else {
		plat, err := native.New(st.OriginURL, o.Origin.Limiter, dial)
		if err != nil {
			st.stopOrigin()
			return nil, err
		}
		st.Edge = edge.New(cfg, plat)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		st.stopOrigin()
		if st.host != nil {
			st.host.Close(context.Background())
		}
		return nil, fmt.Errorf("cannot listen on %s: %w (is another server using the port?)", o.Addr, err)
	}
	st.URL = "http://" + ln.Addr().String()
	st.edgeSrv = &http.Server{
		Handler:           public{next: st.Edge, bodyTimeout: o.BodyTimeout, proxies: o.TrustedProxies},
		ReadHeaderTimeout: o.HeaderTimeout,
		// Counted from the request's first byte, headers included. It does
		// not cut long answers (SSE): net/http lifts the deadline once the
		// body has been read.
		ReadTimeout: o.HeaderTimeout + o.BodyTimeout,
		IdleTimeout: o.IdleTimeout,
		// Generous, so that public answers the usual oversize requests with
		// an envelope that says which part is too long; beyond this
		// net/http answers 431 itself (turned into an envelope by
		// plainErrors).
		MaxHeaderBytes: publicHeaderBuffer,
		ErrorLog:       slog.NewLogLogger(slog.DiscardHandler, slog.LevelError),
	}
	go func() {
		if err := st.edgeSrv.Serve(connlimit.Wrap(plainErrors{ln}, o.MaxConnsPerIP, o.CapLoopback)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("edge stopped", "err", err)
		}
	}()
	return st, nil
}

// Shutdown drains the edge, then the origin, within ctx (each that this
// process runs).
func (s *Stack) Shutdown(ctx context.Context) error {
	var err error
	if s.edgeSrv != nil {
		err = s.edgeSrv.Shutdown(ctx)
	}
	if s.metrics != nil {
		s.metrics.Close() // a scrape is short: nothing to drain
	}
	if s.Origin != nil {
		if oerr := s.Origin.Shutdown(ctx); err == nil {
			err = oerr
		}
	}
	if s.host != nil {
		s.host.Close(context.Background())
	}
	if s.balancer != nil {
		s.balancer.Close()
	}
	return err
}

// stopOrigin undoes a start that failed half way.
func (s *Stack) stopOrigin() {
	if s.metrics != nil {
		s.metrics.Close()
	}
	if s.Origin != nil {
		s.Origin.Shutdown(context.Background())
	}
	if s.balancer != nil {
		s.balancer.Close()
	}
}

// splitSettings checks what a process that runs only one half of the
// service needs: the other half's processes must trust its tokens and
// signed identities, so neither may be generated here, and an edge needs
// origins to send to.
func (o *Options) splitSettings(cfg edge.Config) error {
	switch o.Role {
	case RoleAll:
		if len(o.Origins) > 0 {
			return errors.New("AGENTREADY_ORIGINS is set but the role is all (this process runs its own origin): set AGENTREADY_ROLE=edge, or unset AGENTREADY_ORIGINS")
		}
		return nil
	case RoleEdge:
		if len(o.Origins) == 0 {
			return errors.New("role edge: set AGENTREADY_ORIGINS (or --origins) to the origins' base URLs, e.g. http://origin-a:8081,http://origin-b:8081")
		}
	case RoleOrigin:
		if len(o.Origins) > 0 {
			return errors.New("AGENTREADY_ORIGINS is set but the role is origin: only an edge sends to origins")
		}
	default:
		return fmt.Errorf("role %q: want all, edge or origin", o.Role)
	}
	for _, s := range []struct {
		name string
		set  bool
		why  string
	}{
		{"AGENTREADY_EDGE_SECRET", len(cfg.IdentitySecret) > 0, "the edges sign each caller's identity with it and the origins check it"},
		{"AGENTREADY_TOKEN_KEYS", len(cfg.TokenKeys) > 0, "a token minted by one edge must verify at every edge and origin"},
	} {
		if !s.set {
			return fmt.Errorf("role %s: set %s, the same on every edge and origin (%s); one process running both halves (role all) may generate it, split ones may not", o.Role, s.name, s.why)
		}
	}
	return nil
}

func keyString(ks token.Keys) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.ID + ":" + string(k.Secret)
	}
	return strings.Join(parts, ",")
}

// policy is the address policy of everything the service reaches out to:
// --allow-private opens loopback and private addresses on any port, an
// allow-list exactly what it names; with neither, this is the hosted
// service, whose refusals say nothing of how internal names resolve.
func (o *Options) policy() fetch.AddressPolicy {
	return fetch.AddressPolicy{AllowPrivate: o.AllowPrivate, AllowAnyPort: o.AllowPrivate, Allow: o.Allow,
		Opaque: !o.AllowPrivate && len(o.Allow) == 0}
}

// serveMetrics serves the origin's metrics on addr, a listener of their own
// (nothing when addr is empty), so that the public address never shows them.
func (s *Stack) serveMetrics(addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("AGENTREADY_METRICS_ADDR: cannot listen on %s: %w (is another server using the port? or unset it for no metrics listener)", addr, err)
	}
	s.MetricsURL = "http://" + ln.Addr().String() + "/metrics"
	s.metrics = &http.Server{Handler: s.Origin.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go s.metrics.Serve(ln)
	return nil
}
