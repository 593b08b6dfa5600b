package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// A Client turns its transport over every sessionsPerTransport sessions,
// and a retired transport, with the waits it kept for hosts that never
// answered, is closed and collected once its last session closes: what a
// survey of ever new unreachable sites used to accumulate without end.
func TestRetiredTransportIsReleased(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := closed.Addr().(*net.TCPAddr).Port
	closed.Close() // nothing listens: every dial is refused

	var conns, gone atomic.Int32
	live := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	live.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed:
			gone.Add(1)
		}
	}
	live.Start()
	defer live.Close()

	res := newMapResolver()
	c := NewClient(Config{Resolver: res, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}})
	defer c.CloseIdle()
	ctx := context.Background()

	first := c.NewSession()
	if r := first.Do(ctx, Request{URL: live.URL + "/"}); r.Status != 200 {
		t.Fatalf("the live server: %d %v", r.Status, r.Err)
	}
	var collected atomic.Bool
	runtime.AddCleanup(first.lease.gen.t, func(b *atomic.Bool) { b.Store(true) }, &collected)

	// Fill the first transport with sessions to hosts that refuse, each a
	// host of its own, then start more: they get another transport.
	sessions := []*Session{first}
	for i := 1; i < 2*sessionsPerTransport; i++ {
		host := fmt.Sprintf("h%d.test", i)
		res.set(host, "127.0.0.1")
		s := c.NewSession()
		var fe *Error
		if r := s.Do(ctx, Request{URL: fmt.Sprintf("http://%s:%d/", host, port)}); !errors.As(r.Err, &fe) || fe.Kind != KindRefused {
			t.Fatalf("%s: %v, want the connection refused", host, r.Err)
		}
		sessions = append(sessions, s)
	}
	if sessions[sessionsPerTransport-1].lease.gen != first.lease.gen || sessions[sessionsPerTransport].lease.gen == first.lease.gen {
		t.Fatalf("the transport did not turn over after %d sessions", sessionsPerTransport)
	}
	if g := sessions[sessionsPerTransport].lease.gen; g.sessions != sessionsPerTransport || g.live != sessionsPerTransport {
		t.Errorf("the second transport counts %d sessions, %d live; want %d", g.sessions, g.live, sessionsPerTransport)
	}
	if gone.Load() != 0 {
		t.Fatal("the first transport's connection closed while its sessions were open")
	}
	// The last session of the first transport closes: its idle connection
	// to the live server is closed.
	for _, s := range sessions[:sessionsPerTransport] {
		s.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for gone.Load() < conns.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if conns.Load() != 1 || gone.Load() != 1 {
		t.Fatalf("%d connections to the live server, %d closed; want 1 and 1", conns.Load(), gone.Load())
	}
	// Nothing holds the first transport any more: it is collected, and
	// with it the waits for the hosts that refused.
	first = nil
	clear(sessions[:sessionsPerTransport])
	sessions = sessions[sessionsPerTransport:]
	for !collected.Load() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !collected.Load() {
		t.Error("the retired transport is still reachable after its last session closed")
	}
	// The second transport serves its sessions as before.
	if r := sessions[0].Do(ctx, Request{URL: live.URL + "/again"}); r.Status != 200 {
		t.Errorf("a session of the second transport: %d %v", r.Status, r.Err)
	}
}
