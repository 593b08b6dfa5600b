package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// The proxy on its own, without a browser: what it forwards, what it
// refuses, and that a refusal never reaches the refused server.

func newTestEndpoint(t *testing.T, check func(netip.AddrPort) error, r Resolver, limit int64) *endpoint {
	t.Helper()
	p := newProxy(check, r, 5*time.Second, 30*time.Second)
	e, err := p.listen(limit)
	if err != nil {
		t.Fatal(err)
	}
	e.armed.Store(true)
	t.Cleanup(e.close)
	return e
}

func proxyClient(e *endpoint) *http.Client {
	u, _ := url.Parse(e.URL())
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true},
		Timeout:   10 * time.Second,
	}
}

// countingServer counts the connections it accepts.
func countingServer(t *testing.T, addr string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestProxyForwardsAdmittedHTTP(t *testing.T) {
	srv, _ := countingServer(t, "127.0.0.1:0")
	e := newTestEndpoint(t, onlyFixture, nil, 0)
	resp, err := proxyClient(e).Get(srv.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from /page" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if e.meter.n.Load() < int64(len(body)) {
		t.Errorf("meter counted %d bytes, the body alone is %d", e.meter.n.Load(), len(body))
	}
}

func TestProxyRefusesWithoutConnecting(t *testing.T) {
	srv, conns := countingServer(t, "127.0.0.2:0")
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	e := newTestEndpoint(t, onlyFixture, mapResolver{"sentinel.test": netip.MustParseAddr("127.0.0.2")}, 0)
	c := proxyClient(e)
	for _, u := range []string{
		srv.URL + "/direct",
		fmt.Sprintf("http://sentinel.test:%d/by-name", port),
		fmt.Sprintf("http://[::ffff:127.0.0.2]:%d/mapped", port),
	} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(guardHeader) != "refused" {
			t.Errorf("%s: %d %q, want 403 from the guard", u, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "127.0.0.2") {
			t.Errorf("%s: the refusal names the address: %q", u, body)
		}
	}
	// CONNECT (HTTPS, WebSocket) is refused the same way.
	conn, err := net.Dial("tcp", e.addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT 127.0.0.2:%d HTTP/1.1\r\nHost: 127.0.0.2:%d\r\n\r\n", port, port)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT to a refused address: %d, want 403", resp.StatusCode)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the refused server accepted %d connections", n)
	}
	if e.meter.blocked.Load() != 4 {
		t.Errorf("blocked = %d, want 4", e.meter.blocked.Load())
	}
}

func TestProxyTunnelsAdmittedCONNECT(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "over tls")
	}))
	defer srv.Close()
	e := newTestEndpoint(t, onlyFixture, nil, 0)
	u, _ := url.Parse(e.URL())
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(u)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "over tls" {
		t.Fatalf("got %q", body)
	}
}

// The production policy refuses loopback, private, link-local and metadata
// addresses and other ports; the proxy's own port is refused even when the
// policy admits loopback (no request loops).
func TestProxyPolicyAndSelf(t *testing.T) {
	strict := policyCheck(fetch.AddressPolicy{})
	for _, a := range []string{"127.0.0.1:80", "10.0.0.1:443", "169.254.169.254:80", "[fd00:ec2::254]:80", "[::1]:443", "100.64.0.1:80", "0.1.2.3:80"} {
		ap := netip.MustParseAddrPort(a)
		if err := strict(ap); err == nil {
			t.Errorf("production policy admits %s", a)
		} else if strings.Contains(err.Error(), ap.Addr().String()) {
			t.Errorf("refusal of %s names the address: %v", a, err)
		}
	}
	if err := strict(netip.MustParseAddrPort("93.184.215.14:8080")); err == nil {
		t.Error("production policy admits port 8080")
	}
	if err := strict(netip.MustParseAddrPort("93.184.215.14:443")); err != nil {
		t.Errorf("production policy refuses a public address: %v", err)
	}

	open := policyCheck(loopback.Policy())
	e := newTestEndpoint(t, open, nil, 0)
	resp, err := proxyClient(e).Get(e.URL() + "/loop")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a request to the proxy itself: %d, want 403", resp.StatusCode)
	}
}

// An endpoint forwards nothing until its job starts (what a fresh browser
// context asks for on its own is not the page's).
func TestProxyUnarmedRefuses(t *testing.T) {
	srv, conns := countingServer(t, "127.0.0.1:0")
	e := newTestEndpoint(t, onlyFixture, nil, 0)
	e.armed.Store(false)
	resp, err := proxyClient(e).Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || conns.Load() != 0 {
		t.Fatalf("unarmed endpoint: %d, %d connections", resp.StatusCode, conns.Load())
	}
}

func TestProxyWeightCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for i := 0; i < 64; i++ { // 2 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	e := newTestEndpoint(t, onlyFixture, nil, 256<<10)
	resp, err := proxyClient(e).Get(srv.URL + "/")
	if err == nil {
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n >= 2<<20 {
			t.Fatalf("read all %d bytes through a 256 KiB cap", n)
		}
	}
	if !e.meter.tripped() {
		t.Fatal("the meter did not trip")
	}
	// Later requests of the same job are refused at once.
	resp, err = proxyClient(e).Get(srv.URL + "/again")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(guardHeader) != "over-weight" {
		t.Fatalf("after the cap: %d %q", resp.StatusCode, resp.Header.Get(guardHeader))
	}
}

func TestProxyRejectsNonProxyRequests(t *testing.T) {
	e := newTestEndpoint(t, onlyFixture, nil, 0)
	resp, err := http.Get(e.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("origin-form request: %d, want 400", resp.StatusCode)
	}
}

// Hosts in a non-standard IPv4 notation are refused by the scanner's dialer,
// which the proxy dials through, and reach the browser as a refusal.
func TestNumericHost(t *testing.T) {
	for _, h := range []string{"2130706433", "0x7f.1", "127.1"} {
		_, err := (&guard{check: onlyFixture, resolver: mapResolver{}, timeout: time.Second}).dial(context.Background(), h+":80")
		var r *refusal
		if !errors.As(err, &r) || strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("dial of numeric host %s: %v, want a refusal naming no address", h, err)
		}
	}
}

func FuzzParseTool(f *testing.F) {
	f.Add(`{"api":"document.modelContext.registerTool","name":"search","description":"d","inputSchema":"{\"type\":\"object\"}"}`)
	f.Add(`{"api":"navigator.modelContext.provideContext","name":"","inputSchema":null}`)
	f.Add(`{"api":"x","name":"y"}`)
	f.Add(`{"api":"document.modelContext.registerTool","name":"n","inputSchema":"{not json"}`)
	f.Fuzz(func(t *testing.T, payload string) {
		tool, ok := parseTool(payload)
		if !ok {
			return
		}
		if tool.Name == "" || len(tool.Name) > 256 || len(tool.Description) > 4096 {
			t.Fatalf("bounds not applied: %+v", tool)
		}
		if tool.InputSchema != nil && !json.Valid(tool.InputSchema) {
			t.Fatalf("invalid schema kept: %s", tool.InputSchema)
		}
	})
}
