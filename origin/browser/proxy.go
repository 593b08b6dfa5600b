package browser

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/engine/fetch"
)

// Resolver looks up a host's addresses. *net.Resolver satisfies it; tests map
// names to fixed addresses so a name that resolves to a refused address can
// be shown without DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// guardHeader marks a response the proxy wrote itself because the guard
// refused the destination, so the job can tell "the site answered 403" from
// "we refused to go there".
const guardHeader = "X-Agentready-Browser-Guard"

// refusal is the guard saying no. It never carries the address a name
// resolved to: the message reaches users, and the resolver's view of internal
// names is not theirs to map.
type refusal struct{ why string }

func (r *refusal) Error() string { return "the browser may not connect there: " + r.why }

// guard resolves, checks and dials on the browser's behalf. Every address a
// name resolves to is checked, only admitted ones are dialled, and the dialer's
// Control hook checks the exact address again at connect time.
type guard struct {
	check    func(netip.AddrPort) error
	resolver Resolver
	timeout  time.Duration
	// self reports the proxy's own listening addresses: a page must not make
	// the proxy connect to itself (a loop that multiplies every request) even
	// when the policy admits loopback.
	self func(netip.AddrPort) bool
	// opaque words every refused address and every name that does not
	// resolve alike (fetch.AddressPolicy.Opaque, the hosted service): a
	// page's console, the proxy's answers and a render's error would
	// otherwise tell how the service's resolver sees internal names.
	opaque bool
}

func (g *guard) admit(ap netip.AddrPort) error {
	if g.self != nil && g.self(ap) {
		return &refusal{why: "that is the browser's own proxy"}
	}
	if err := g.check(ap); err != nil {
		if g.opaque {
			return &refusal{why: fetch.NotPublic("the host")}
		}
		return &refusal{why: "the address is not one the scanner visits (" + describe(err) + ")"}
	}
	return nil
}

// describe is the check's reason; checks name the kind of address, never
// the address itself (see policyCheck).
func describe(err error) string { return err.Error() }

// dial connects for the browser through the scanner's guarded dialer
// (engine/fetch.GuardedDial): one implementation resolves, checks every
// address at connect time and refuses non-standard numeric hosts for the
// scanner and the browser alike. What is added here is the browser's own
// rule (never the proxy itself) and errors that carry no address.
func (g *guard) dial(ctx context.Context, hostport string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return nil, &refusal{why: "the request names no host and port"}
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return nil, &refusal{why: "the port is not a number between 1 and 65535"}
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	check := func(ap netip.AddrPort) error { return g.admit(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())) }
	c, err := fetch.GuardedDial(check, g.resolver, g.timeout)(ctx, "tcp", hostport)
	if err == nil {
		return c, nil
	}
	// The dialer's errors name the address dialled; the browser's say why
	// without it.
	var r *refusal
	var be *fetch.BlockedError
	var dns *net.DNSError
	switch {
	case errors.As(err, &r):
		return nil, r
	case g.opaque && (errors.As(err, &be) || errors.As(err, &dns) && ctx.Err() == nil):
		return nil, &refusal{why: fetch.NotPublic("the host")}
	case errors.As(err, &be):
		return nil, &refusal{why: "the host " + strings.SplitN(be.What, ";", 2)[0]}
	case errors.As(err, &dns):
		return nil, errors.New("the host name does not resolve")
	}
	return nil, err
}

// meter counts the bytes one job's browser context downloads and trips when
// they pass the page weight cap: every connection of the job is then closed and
// no new one is made, so the cap holds whatever the page keeps asking for.
type meter struct {
	limit   int64
	n       atomic.Int64
	blocked atomic.Int64
	over    chan struct{}
	once    sync.Once

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func newMeter(limit int64) *meter {
	return &meter{limit: limit, over: make(chan struct{}), conns: map[net.Conn]struct{}{}}
}

func (m *meter) add(n int) {
	if m.n.Add(int64(n)) > m.limit && m.limit > 0 {
		m.once.Do(func() { close(m.over) })
		m.closeAll()
	}
}

func (m *meter) tripped() bool {
	select {
	case <-m.over:
		return true
	default:
		return false
	}
}

// track registers c to be closed with the meter; false when the meter is
// already closed or tripped (c is then closed at once).
func (m *meter) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.tripped() {
		c.Close()
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

func (m *meter) untrack(c net.Conn) {
	m.mu.Lock()
	delete(m.conns, c)
	m.mu.Unlock()
}

func (m *meter) closeAll() {
	m.mu.Lock()
	conns := m.conns
	m.conns = map[net.Conn]struct{}{}
	m.closed = true
	m.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// countingConn counts what the site sends towards the meter.
type countingConn struct {
	net.Conn
	m *meter
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.m.add(n)
	}
	return n, err
}

func (c *countingConn) Close() error {
	c.m.untrack(c)
	return c.Conn.Close()
}

// proxy is the browser's only way out: Chromium is started with
// --proxy-server pointing at an endpoint of it (and every job's browser
// context at an endpoint of its own), and it forwards absolute-form HTTP
// requests and CONNECT tunnels (HTTPS, WebSocket) after the guard admitted the
// destination. It never forwards to the guard's refusals, whatever the page
// does: subresources, iframes, redirects (each hop is a new request), fetch,
// XHR, WebSocket, service workers and prefetches all arrive here.
type proxy struct {
	guard       *guard
	maxLifetime time.Duration // cap on one tunnel or exchange

	mu    sync.Mutex
	addrs map[netip.AddrPort]bool
}

func newProxy(check func(netip.AddrPort) error, r Resolver, dialTimeout, maxLifetime time.Duration) *proxy {
	p := &proxy{maxLifetime: maxLifetime, addrs: map[netip.AddrPort]bool{}}
	if r == nil {
		r = net.DefaultResolver
	}
	p.guard = &guard{check: check, resolver: r, timeout: dialTimeout, self: p.isSelf}
	return p
}

func (p *proxy) isSelf(ap netip.AddrPort) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addrs[ap] {
		return true
	}
	// The listeners are on 127.0.0.1; an unspecified or other loopback
	// address reaches them too.
	if ap.Addr().IsLoopback() || ap.Addr().IsUnspecified() {
		return p.addrs[netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())]
	}
	return false
}

// endpoint is one listener of the proxy with its own meter, transport and
// connections; closing it ends everything the job it served had open.
type endpoint struct {
	p         *proxy
	ln        net.Listener
	addr      netip.AddrPort
	srv       *http.Server
	meter     *meter
	transport *http.Transport
	ctx       context.Context
	cancel    context.CancelFunc
	// armed is set when the job's navigation starts. Before that the
	// endpoint forwards nothing: what a browser context asks for on its own
	// when it is created (Chromium's connections to Google services) is not
	// the page's and must not leave. The browser-wide endpoint is never armed.
	armed atomic.Bool
}

// listen opens an endpoint; limit is the page weight cap (0: none).
func (p *proxy) listen(limit int64) (*endpoint, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	ctx, cancel := context.WithCancel(context.Background())
	e := &endpoint{p: p, ln: ln, addr: ap, meter: newMeter(limit), ctx: ctx, cancel: cancel}
	e.transport = &http.Transport{
		Proxy:                  nil, // never an environment proxy: the guard must see the destination
		DialContext:            e.dialUpstream,
		DisableCompression:     true, // pass the browser's Accept-Encoding and the site's bytes through
		MaxResponseHeaderBytes: 256 << 10,
		ResponseHeaderTimeout:  p.maxLifetime,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConnsPerHost:    6,
	}
	e.srv = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	p.mu.Lock()
	p.addrs[ap] = true
	p.mu.Unlock()
	go e.srv.Serve(ln)
	return e, nil
}

// URL is the value for --proxy-server and CreateBrowserContext's proxyServer.
func (e *endpoint) URL() string { return "http://" + e.addr.String() }

func (e *endpoint) close() {
	e.cancel()
	e.srv.Close()
	e.meter.closeAll()
	e.transport.CloseIdleConnections()
	e.p.mu.Lock()
	delete(e.p.addrs, e.addr)
	e.p.mu.Unlock()
}

func (e *endpoint) dialUpstream(ctx context.Context, _, addr string) (net.Conn, error) {
	if !e.armed.Load() {
		return nil, &refusal{why: "the browser connects only for a page it was asked to load"}
	}
	if e.meter.tripped() {
		return nil, errOverWeight
	}
	c, err := e.p.guard.dial(ctx, addr)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			e.meter.blocked.Add(1)
		}
		return nil, err
	}
	cc := &countingConn{Conn: c, m: e.meter}
	if !e.meter.track(cc) {
		return nil, errOverWeight
	}
	c.SetDeadline(time.Now().Add(e.p.maxLifetime))
	return cc, nil
}

// traceProxy sees every request the proxy receives (tests only).
var traceProxy func(*endpoint, *http.Request)

var errOverWeight = errors.New("the page passed its download cap")

var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func stripHop(h http.Header) {
	for _, f := range h["Connection"] {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

func (e *endpoint) refuse(w http.ResponseWriter, err error) {
	var r *refusal
	status := http.StatusBadGateway
	msg := "agentready's browser could not reach this address."
	w.Header().Set(guardHeader, "unreachable")
	if errors.As(err, &r) {
		status = http.StatusForbidden
		w.Header().Set(guardHeader, "refused")
		msg = "agentready's browser does not connect to this address: " + r.why + "."
	} else if errors.Is(err, errOverWeight) || e.meter.tripped() {
		status = http.StatusForbidden
		w.Header().Set(guardHeader, "over-weight")
		msg = "agentready's browser stopped downloading: the page passed its size cap."
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if traceProxy != nil {
		traceProxy(e, r)
	}
	switch {
	case r.Method == http.MethodConnect:
		e.tunnel(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http" && r.URL.Host != "":
		e.forward(w, r)
	default:
		// Origin-form requests mean something spoke to the proxy as if it were
		// a web server; https absolute-form is not how browsers use a proxy.
		http.Error(w, "this is agentready's browser proxy; it forwards only its own browser's requests", http.StatusBadRequest)
	}
}

func (e *endpoint) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := e.dialUpstream(e.ctx, "tcp", r.Host)
	if err != nil {
		e.refuse(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "tunnel not supported", http.StatusInternalServerError)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !e.meter.track(client) {
		up.Close()
		return
	}
	client.SetDeadline(time.Now().Add(e.p.maxLifetime))
	defer e.meter.untrack(client)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		client.Close()
		up.Close()
		return
	}
	pipe(client, brw.Reader, up)
}

// pipe copies both ways until either side ends, then closes both.
func pipe(client net.Conn, buffered *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		if buffered != nil && buffered.Buffered() > 0 {
			b, _ := buffered.Peek(buffered.Buffered())
			up.Write(b)
		}
		io.Copy(up, client)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, up)
		done <- struct{}{}
	}()
	<-done
	client.Close()
	up.Close()
	<-done
}

func (e *endpoint) forward(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(e.ctx, e.p.maxLifetime)
	defer cancel()
	out := r.Clone(ctx)
	out.RequestURI = ""
	upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
	stripHop(out.Header)
	if upgrade {
		out.Header.Set("Connection", "Upgrade")
		out.Header.Set("Upgrade", "websocket")
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := e.transport.RoundTrip(out)
	if err != nil {
		e.refuse(w, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		e.switchProtocols(w, resp)
		return
	}
	stripHop(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	f, _ := w.(http.Flusher)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

func (e *endpoint) switchProtocols(w http.ResponseWriter, resp *http.Response) {
	up, ok := resp.Body.(io.ReadWriteCloser)
	hj, hok := w.(http.Hijacker)
	if !ok || !hok {
		http.Error(w, "upgrade failed", http.StatusBadGateway)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	if !e.meter.track(client) {
		return
	}
	defer e.meter.untrack(client)
	client.SetDeadline(time.Now().Add(e.p.maxLifetime))
	stripHop(resp.Header)
	resp.Header.Set("Connection", "Upgrade")
	resp.Header.Set("Upgrade", "websocket")
	if _, err := io.WriteString(client, "HTTP/1.1 101 Switching Protocols\r\n"); err != nil {
		client.Close()
		return
	}
	resp.Header.Write(client)
	io.WriteString(client, "\r\n")
	pipe(client, brw.Reader, rwcConn{up, client})
}

// rwcConn lets pipe treat the upgraded response body like a connection.
type rwcConn struct {
	io.ReadWriteCloser
	net.Conn
}

func (c rwcConn) Read(b []byte) (int, error)  { return c.ReadWriteCloser.Read(b) }
func (c rwcConn) Write(b []byte) (int, error) { return c.ReadWriteCloser.Write(b) }
func (c rwcConn) Close() error                { return c.ReadWriteCloser.Close() }
