package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// sentinel is a server the tests' guard refuses (on 127.0.0.2, or on the
// fixture's own address at another port): it counts every TCP connection
// and every UDP datagram that reaches it, whatever they carry.
type sentinel struct {
	tcp   net.Listener
	udp   net.PacketConn
	conns atomic.Int64
	dgram atomic.Int64
	mu    sync.Mutex
	paths []string
}

func startSentinel(t *testing.T) *sentinel { return startSentinelOn(t, "127.0.0.2") }

func startSentinelOn(t *testing.T, ip string) *sentinel {
	t.Helper()
	ln, err := net.Listen("tcp4", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (needed for the sentinel): %v", ip, err)
	}
	s := &sentinel{tcp: ln}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.paths = append(s.paths, r.URL.Path)
			s.mu.Unlock()
			fmt.Fprint(w, "sentinel reached")
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	pc, err := net.ListenPacket("udp4", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.udp = pc
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			s.dgram.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return s
}

func (s *sentinel) port() int    { return s.tcp.Addr().(*net.TCPAddr).Port }
func (s *sentinel) udpPort() int { return s.udp.LocalAddr().(*net.UDPAddr).Port }

func (s *sentinel) assertUntouched(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, d := s.conns.Load(), s.dgram.Load(); n != 0 || d != 0 {
		t.Fatalf("the sentinel was reached: %d TCP connections (paths %v), %d UDP datagrams", n, s.paths, d)
	}
}

// probePage tries every route a page has to the sentinel. {S} is the
// sentinel's origin by address, {N} by a name the proxy's resolver maps to
// it, {P} the sentinel's port, {U} its UDP port, {A} the allowed server's
// origin by a name that resolves to it, {O} a second sentinel's origin on
// the allowed server's own address at another port, {Q} that port.
const probePage = `<!doctype html>
<html><head><title>probe</title>
<link rel="prefetch" href="{S}/prefetch">
<link rel="preconnect" href="{S}">
<link rel="dns-prefetch" href="{N}">
<link rel="stylesheet" href="{S}/style.css">
<style>
body { background: url({S}/css-url) }
@font-face { font-family: probe; src: url({S}/font.woff) }
h1 { font-family: probe }
</style>
<script>for (const i of [1, 2, 3]) fetch('/hold?' + i).catch(() => {})</script>
</head><body><h1>probe</h1>
<img src="{S}/img">
<img src="/redirect?to={S}/redirected-img">
<img src="{N}/dns-img">
<img src="{A}/dns-allowed">
<img src="{O}/other-port-img">
<img src="/redirect?to={O}/redirected-other-port">
<iframe src="{O}/other-port-iframe"></iframe>
<iframe src="{S}/iframe"></iframe>
<iframe src="/redirect?to={S}/redirected-iframe"></iframe>
<iframe src="/meta"></iframe>
<video src="{S}/video"></video>
<object data="{S}/object"></object>
<script>
const tries = [
  fetch('{S}/fetch').catch(() => {}),
  fetch('{N}/dns-fetch').catch(() => {}),
  fetch('https://127.0.0.2:{P}/tls').catch(() => {}),
  fetch('{O}/other-port-fetch').catch(() => {}),
  new Promise(res => { try { const ws = new WebSocket('ws://127.0.0.1:{Q}/other-port-ws'); ws.onerror = ws.onclose = ws.onopen = res; } catch (e) { res(); } }),
  fetch('/redirect?to=' + encodeURIComponent('{S}/redirected-fetch')).catch(() => {}),
  fetch('{S}/no-cors', {mode: 'no-cors'}).catch(() => {}),
  new Promise(res => { const x = new XMLHttpRequest(); x.open('GET', '{S}/xhr'); x.onloadend = res; x.send(); }),
  new Promise(res => { try { const ws = new WebSocket('ws://127.0.0.2:{P}/ws'); ws.onerror = ws.onclose = ws.onopen = res; } catch (e) { res(); } }),
  new Promise(res => { try { const ws = new WebSocket('wss://127.0.0.2:{P}/wss'); ws.onerror = ws.onclose = ws.onopen = res; } catch (e) { res(); } }),
  new Promise(res => { try { const ws = new WebSocket('ws://sentinel.test:{P}/dns-ws'); ws.onerror = ws.onclose = ws.onopen = res; } catch (e) { res(); } }),
  new Promise(res => { const es = new EventSource('{S}/sse'); es.onerror = es.onopen = () => { es.close(); res(); }; }),
  new Promise(res => { const w = new Worker('/worker.js'); w.onmessage = w.onerror = res; }),
  (async () => {
    try {
      const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.2:{U}'}, {urls: 'turn:127.0.0.2:{U}?transport=udp', username: 'u', credential: 'p'}, {urls: 'turn:127.0.0.2:{P}?transport=tcp', username: 'u', credential: 'p'}]});
      pc.createDataChannel('probe');
      await pc.setLocalDescription(await pc.createOffer());
      await new Promise(r => { pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r(); setTimeout(r, 2000); });
      pc.close();
    } catch (e) {}
  })(),
  (async () => {
    try {
      await navigator.serviceWorker.register('/sw.js');
      await navigator.serviceWorker.ready;
      await fetch('/sw-ready');
    } catch (e) {
      await fetch('/sw-failed');
    }
  })(),
];
navigator.sendBeacon('{S}/beacon', 'x');
Promise.all(tries).then(async () => {
  await fetch('/done');
  document.body.insertAdjacentHTML('beforeend', '<p id="done">all routes tried</p>');
});
</script>
</body></html>`

const serviceWorker = `
self.addEventListener('install', e => e.waitUntil(Promise.all([
  fetch('{S}/sw-install').catch(() => {}),
  fetch('{N}/sw-dns').catch(() => {}),
]).then(() => self.skipWaiting())));
self.addEventListener('activate', e => e.waitUntil(fetch('{S}/sw-activate').catch(() => {}).then(() => self.clients.claim())));
self.addEventListener('fetch', e => { if (e.request.url.endsWith('/sw-ready')) e.respondWith(fetch('{S}/sw-fetch').catch(() => new Response('')).then(() => fetch(e.request))); });
`

// control is the allowed server: it serves the probe and records which of
// its control paths the page reached, proving the page really ran.
type control struct {
	mu   sync.Mutex
	hits map[string]int
	done chan struct{}
	once sync.Once
}

func (c *control) hit(p string) {
	c.mu.Lock()
	c.hits[p]++
	c.mu.Unlock()
}

func (c *control) count(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[p]
}

// The guard is the production one (policyCheck) with an allow-list naming
// exactly the fixture's address and port, as AGENTREADY_ALLOW would: the
// page is served, and neither a sentinel on another loopback address nor one
// on the fixture's own address at another port is ever reached.
func TestSSRFSentinelNeverReached(t *testing.T) {
	s := startSentinel(t)
	otherPort := startSentinelOn(t, "127.0.0.1")
	ctl := &control{hits: map[string]int{}, done: make(chan struct{})}
	var allowedOrigin string
	fill := func(tpl string) string {
		return strings.NewReplacer(
			"{S}", fmt.Sprintf("http://127.0.0.2:%d", s.port()),
			"{N}", fmt.Sprintf("http://sentinel.test:%d", s.port()),
			"{P}", fmt.Sprint(s.port()),
			"{U}", fmt.Sprint(s.udpPort()),
			"{A}", allowedOrigin,
			"{O}", fmt.Sprintf("http://127.0.0.1:%d", otherPort.port()),
			"{Q}", fmt.Sprint(otherPort.port()),
		).Replace(tpl)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctl.hit(r.URL.Path)
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, fill(probePage))
		case "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, fill(serviceWorker))
		case "/worker.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, fill(`fetch('{S}/worker').catch(() => {}).then(() => fetch('{N}/worker-dns')).catch(() => {}).then(() => postMessage('done'));`))
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, fill(`<meta http-equiv="refresh" content="0;url={S}/meta-refresh">`))
		case "/hold":
			// Three of these keep the network busy until the page has tried
			// everything, so Render (which waits until at most two
			// connections are open) returns after that.
			select {
			case <-ctl.done:
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		case "/done":
			ctl.once.Do(func() { close(ctl.done) })
		}
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	allowedOrigin = fmt.Sprintf("http://page.test:%d", port)

	p := newTestPool(t, Config{
		Check:    policyCheck(fetch.AddressPolicy{Allow: allowOnly(t, srv.Listener.Addr().String())}),
		Resolver: mapResolver{"sentinel.test": netip.MustParseAddr("127.0.0.2"), "page.test": fixtureAddr},
		Settle:   40 * time.Second,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.Render(ctx, srv.URL+"/")
	if err != nil {
		ctl.mu.Lock()
		t.Fatalf("%v (control hits %v)", err, ctl.hits)
	}
	if !strings.Contains(r.HTML, `<p id="done">all routes tried</p>`) || ctl.count("/done") != 1 {
		t.Fatalf("the probe page did not finish its attempts (control hits %v):\n%s", ctl.hits, r.HTML)
	}
	// The routes that must have run for the test to mean anything.
	for _, path := range []string{"/sw.js", "/sw-ready", "/worker.js", "/meta", "/redirect", "/dns-allowed", "/hold"} {
		if ctl.count(path) == 0 {
			t.Errorf("control path %s was never requested (hits %v)", path, ctl.hits)
		}
	}
	if r.Blocked < 10 {
		t.Errorf("the guard refused %d connections; the probe makes well over 10 (did the requests reach the proxy?)", r.Blocked)
	}
	s.assertUntouched(t)
	otherPort.assertUntouched(t)
	// Nothing in flight can reach them later either.
	p.Close()
	s.assertUntouched(t)
	otherPort.assertUntouched(t)
}

// allowOnly is the allow-list AGENTREADY_ALLOW=list would give.
func allowOnly(t testing.TB, list string) fetch.AllowList {
	t.Helper()
	l, err := fetch.ParseAllowList(list)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A top-level redirect to a refused address fails the job with ErrBlocked,
// and the refused server is never contacted: another loopback address, or
// the allow-listed fixture's own address at another port.
func TestTopLevelRedirectToRefusedAddress(t *testing.T) {
	s := startSentinel(t)
	otherPort := startSentinelOn(t, "127.0.0.1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/http":
			http.Redirect(w, r, fmt.Sprintf("http://127.0.0.2:%d/top", s.port()), http.StatusFound)
		case "/https":
			http.Redirect(w, r, fmt.Sprintf("https://127.0.0.2:%d/top", s.port()), http.StatusFound)
		case "/other-port":
			http.Redirect(w, r, fmt.Sprintf("http://127.0.0.1:%d/top", otherPort.port()), http.StatusFound)
		case "/file-redirect":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/file-script":
			fmt.Fprint(w, `<!doctype html><title>web</title><script>location.href = "file:///etc/passwd";</script>`)
		}
	}))
	defer srv.Close()
	p := newTestPool(t, Config{Check: policyCheck(fetch.AddressPolicy{Allow: allowOnly(t, srv.Listener.Addr().String())})})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, path := range []string{"/http", "/https", "/other-port"} {
		_, err := p.Render(ctx, srv.URL+path)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err = %v, want ErrBlocked", path, err)
		}
		if err != nil && strings.Contains(err.Error(), "127.0.0.2") {
			t.Errorf("%s: the error names the refused address: %v", path, err)
		}
	}
	// A web page cannot take the browser to a local file, by redirect or by
	// script.
	for _, path := range []string{"/file-redirect", "/file-script"} {
		r, err := p.Render(ctx, srv.URL+path)
		if err == nil && (!strings.HasPrefix(r.FinalURL, "http://") || strings.Contains(r.HTML, "root:")) {
			t.Errorf("%s: ended at %q:\n%s", path, r.FinalURL, r.HTML)
		}
	}
	s.assertUntouched(t)
	otherPort.assertUntouched(t)
}

// With the production policy (no --allow-private) the whole loopback range
// is refused; with AllowPrivate and AllowAnyPort the same page renders.
func TestProductionPolicyRefusesLoopback(t *testing.T) {
	srv := serve(t, map[string]string{"/": `<!doctype html><title>local</title><p>dev server`})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	strict := newTestPool(t, Config{Check: policyCheck(fetch.AddressPolicy{})})
	if _, err := strict.Render(ctx, srv.URL+"/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("default policy: err = %v, want ErrBlocked", err)
	}
	if _, err := strict.Render(ctx, "http://[::1]:8/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("default policy, IPv6 loopback: err = %v, want ErrBlocked", err)
	}
	if h := strict.Health(); h.Started {
		t.Errorf("refused URLs started the browser: %+v", h)
	}

	open := newTestPool(t, Config{Check: policyCheck(loopback.Policy())})
	r, err := open.Render(ctx, srv.URL+"/")
	if err != nil {
		t.Fatalf("AllowPrivate: %v", err)
	}
	if r.Title != "local" {
		t.Fatalf("AllowPrivate: title %q, want local", r.Title)
	}

	// An allow-list admits the server it names and not the same address
	// on another port.
	other := serve(t, map[string]string{"/": `<!doctype html><title>other</title><p>another dev server`})
	listed := newTestPool(t, Config{Check: policyCheck(fetch.AddressPolicy{Allow: allowOnly(t, srv.Listener.Addr().String())})})
	if r, err := listed.Render(ctx, srv.URL+"/"); err != nil || r.Title != "local" {
		t.Fatalf("allow-listed fixture: %v %+v", err, r)
	}
	if _, err := listed.Render(ctx, other.URL+"/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("another port of the allow-listed address: err = %v, want ErrBlocked", err)
	}
}

// While a job runs, its proxy endpoint forwards only the page's own requests.
// A fresh browser context calls Google services on its own (seen here: a
// www.google.com connection per context, sign-in and device check-in on the
// browser-wide endpoint); those come before the job's navigation and are
// refused by an endpoint that is not armed yet, and the flags and profile
// preferences switch most of them off.
func TestBrowserMakesNoRequestsOfItsOwn(t *testing.T) {
	srv := serve(t, map[string]string{"/": `<!doctype html><title>quiet</title><p>nothing to fetch`})
	host := strings.TrimPrefix(srv.URL, "http://")
	var mu sync.Mutex
	var foreign []string
	traceProxy = func(e *endpoint, r *http.Request) {
		if e.armed.Load() && r.Host != host {
			mu.Lock()
			foreign = append(foreign, r.Method+" "+r.Host)
			mu.Unlock()
		}
	}
	defer func() { traceProxy = nil }()
	p := newTestPool(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		if _, err := p.Render(ctx, srv.URL+"/"); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(foreign) > 0 {
		t.Fatalf("during jobs the browser asked for hosts the page never named: %v", foreign)
	}
}
