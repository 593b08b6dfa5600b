package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// concurrencyProbe is a handler that counts requests in flight and holds each
// one until want are in flight at once (or a deadline passes), so a test can
// tell "all at once" from "in waves" without timing anything.
type concurrencyProbe struct {
	want     int32
	hold     time.Duration // upper bound on the wait for the others
	inflight atomic.Int32
	max      atomic.Int32
	protos   sync.Map // proto → true
	all      chan struct{}
	once     sync.Once
}

func newProbe(want int, hold time.Duration) *concurrencyProbe {
	return &concurrencyProbe{want: int32(want), hold: hold, all: make(chan struct{})}
}

func (p *concurrencyProbe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.protos.Store(r.Proto, true)
	n := p.inflight.Add(1)
	defer p.inflight.Add(-1)
	for {
		m := p.max.Load()
		if n <= m || p.max.CompareAndSwap(m, n) {
			break
		}
	}
	if n >= p.want {
		p.once.Do(func() { close(p.all) })
	}
	select {
	case <-p.all:
	case <-time.After(p.hold):
	case <-r.Context().Done():
	}
	fmt.Fprint(w, r.URL.Path)
}

// h2Server is a loopback TLS server offering h2 by ALPN, counting the
// connections it accepts.
func h2Server(t *testing.T, h http.Handler, h2 bool) (*httptest.Server, *atomic.Int32, *tls.Config) {
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = h2
	srv.Config.ErrorLog = quietLog()
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, &conns, &tls.Config{RootCAs: pool}
}

func fanOut(s *Session, base string, n int) []*Response {
	out := make([]*Response, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = s.Do(context.Background(), Request{URL: fmt.Sprintf("%s/r%d", base, i), Round: 1})
		}(i)
	}
	wg.Wait()
	return out
}

// Over TLS the fetcher negotiates h2 through its guarded dialer, and a round
// of N requests to one h2 host goes out at once, as streams of one
// connection: the per-host cap (4 here) does not split it into waves.
func TestHTTP2RoundIsOneWaveOnOneConnection(t *testing.T) {
	const n = 16
	// The probe waits up to 20 s for all n (a safety net a loaded machine
	// does not reach; in waves it would, once a wave), inside a request
	// timeout of a minute.
	const hold = 20 * time.Second
	probe := newProbe(n, hold)
	srv, conns, tlsConf := h2Server(t, probe, true)
	c := NewClient(Config{TLS: tlsConf, PerHost: 4, RequestTimeout: time.Minute, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}})
	defer c.CloseIdle()
	s := c.NewSession()
	start := time.Now()
	for i, r := range fanOut(s, srv.URL, n) {
		if r.Status != 200 || r.Err != nil || string(r.Body) != fmt.Sprintf("/r%d", i) {
			t.Fatalf("request %d: %d %v %q", i, r.Status, r.Err, r.Body)
		}
	}
	if got := probe.max.Load(); got != n {
		t.Errorf("at most %d requests in flight at once, want all %d (took %s: the round went in waves)", got, n, time.Since(start))
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1 (h2 multiplexes the round)", got)
	}
	for _, rec := range s.Records() {
		if rec.Proto != "HTTP/2.0" {
			t.Errorf("%s went over %q", rec.URL, rec.Proto)
		}
	}
	if _, ok := probe.protos.Load("HTTP/2.0"); !ok {
		t.Error("the server saw no HTTP/2 request")
	}

	// The next session (the next scan) reuses the pooled connection.
	probe2 := newProbe(n, hold)
	srv.Config.Handler = probe2
	for _, r := range fanOut(c.NewSession(), srv.URL, n) {
		if r.Status != 200 {
			t.Fatalf("second session: %d %v", r.Status, r.Err)
		}
	}
	if probe2.max.Load() != n || conns.Load() != 1 {
		t.Errorf("second session: %d in flight, %d connections", probe2.max.Load(), conns.Load())
	}

	// The same TLS server is still refused by the hosted policy: h2 goes
	// through the guarded dialer, not around it.
	hosted := NewClient(Config{TLS: tlsConf, Policy: AddressPolicy{AllowAnyPort: true}})
	if r := hosted.NewSession().Do(context.Background(), Request{URL: srv.URL + "/"}); !errors.Is(r.Err, ErrBlockedAddress) {
		t.Errorf("hosted policy over h2: %v", r.Err)
	}
}

// Over HTTP/1.1 (TLS without h2, and plain http) the per-host cap still holds:
// each request in flight is a connection of its own.
func TestHTTP1KeepsThePerHostCap(t *testing.T) {
	const n, perHost = 12, 3
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"tls", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) {
			// Nobody can gather n at once, so each request is held briefly:
			// long enough for the cap to be what limits concurrency.
			probe := newProbe(n, 50*time.Millisecond)
			cfg := Config{PerHost: perHost, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}
			var base string
			if tc.tls {
				srv, _, tlsConf := h2Server(t, probe, false)
				cfg.TLS, base = tlsConf, srv.URL
			} else {
				srv := httptest.NewServer(probe)
				t.Cleanup(srv.Close)
				base = srv.URL
			}
			s := NewClient(cfg).NewSession()
			for _, r := range fanOut(s, base, n) {
				if r.Status != 200 {
					t.Fatalf("%d %v", r.Status, r.Err)
				}
			}
			if got := probe.max.Load(); got > perHost || got < 2 {
				t.Errorf("%d requests in flight at once, want between 2 and the cap %d", got, perHost)
			}
			for _, rec := range s.Records() {
				if rec.Proto != "HTTP/1.1" {
					t.Errorf("%s went over %q", rec.URL, rec.Proto)
				}
			}
		})
	}
}

// firstHangs hands every accepted connection to the server except the first,
// which it holds open without a word: a TLS handshake that stalls.
type firstHangs struct {
	net.Listener
	once sync.Once
	held chan net.Conn
}

func (l *firstHangs) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := false
		l.once.Do(func() { first = true })
		if !first {
			return c, nil
		}
		l.held <- c
	}
}

// When the first connection to a host stalls in its handshake, the rest of
// the round stops waiting for it to learn the protocol and dials for itself.
// Had they waited, every request would have timed out with the stalled one;
// as it is, even the stalled request is answered, on the connection the
// others opened (the transport hands it the first connection that is ready).
func TestStalledProbeDoesNotHoldTheRound(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = quietLog()
	fh := &firstHangs{Listener: srv.Listener, held: make(chan net.Conn, 1)}
	srv.Listener = fh
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	const timeout = 2 * time.Second
	s := NewClient(Config{TLS: &tls.Config{RootCAs: pool}, RequestTimeout: timeout, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}).NewSession()
	for _, r := range fanOut(s, srv.URL, 8) {
		if r.Status != 200 {
			t.Errorf("%d %v: the round waited for the stalled handshake", r.Status, r.Err)
		}
	}
	select {
	case c := <-fh.held:
		c.Close()
	default:
		t.Error("no connection stalled: the test did not exercise the fallback")
	}
}
