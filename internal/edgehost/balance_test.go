package edgehost

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// testOrigin is an origin that answers every path with its name (and what
// body it was sent), and /healthz with 200 until unhealthy is set.
type testOrigin struct {
	name      string
	srv       *httptest.Server
	unhealthy atomic.Bool
	served    atomic.Int64
}

func startOrigin(t *testing.T, name string, ln net.Listener) *testOrigin {
	t.Helper()
	o := &testOrigin{name: name}
	o.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			if o.unhealthy.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			return
		}
		o.served.Add(1)
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, name+" "+r.Method+" "+r.URL.RequestURI()+" "+string(body))
	}))
	if ln != nil {
		o.srv.Listener.Close()
		o.srv.Listener = ln
	}
	o.srv.Start()
	t.Cleanup(o.srv.Close)
	return o
}

func get(t *testing.T, b *Balancer, path string) (string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.URL()+path, nil)
	resp, err := b.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// Two origins share the requests; one killed (its port refusing
// connections) costs no request, is out of the rotation from the request
// that found out, and is back once it answers its health check again on the
// same address.
func TestBalancerSpreadsAndFailsOver(t *testing.T) {
	a, bo := startOrigin(t, "a", nil), startOrigin(t, "b", nil)
	b, err := NewBalancer([]string{a.srv.URL, bo.srv.URL}, BalancerOptions{ProbeInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 20; i++ {
		body, err := get(t, b, "/api/scan?url=example.com")
		if err != nil || !strings.HasSuffix(body, " GET /api/scan?url=example.com ") {
			t.Fatalf("request %d: %q, %v", i, body, err)
		}
	}
	if a.served.Load() != 10 || bo.served.Load() != 10 {
		t.Errorf("20 requests were served %d by a and %d by b; want them spread 10/10", a.served.Load(), bo.served.Load())
	}

	addr := a.srv.Listener.Addr().String()
	a.srv.Close() // killed: its port refuses connections
	for i := 0; i < 20; i++ {
		body, err := get(t, b, "/x")
		if err != nil || !strings.HasPrefix(body, "b ") {
			t.Fatalf("request %d after a was killed: %q, %v; want every one answered by b", i, body, err)
		}
	}
	if got := b.Healthy(); !slices.Equal(got, []string{bo.srv.URL}) {
		t.Errorf("healthy after the kill: %v, want only b", got)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again to restart a: %v", addr, err)
	}
	a2 := startOrigin(t, "a", ln)
	testenv.Eventually(t, 10*time.Second, "a back in the rotation", func() bool { return len(b.Healthy()) == 2 })
	for i := 0; i < 10; i++ {
		if _, err := get(t, b, "/x"); err != nil {
			t.Fatal(err)
		}
	}
	if a2.served.Load() != 5 {
		t.Errorf("the restarted a served %d of 10 requests, want 5", a2.served.Load())
	}
}

// An origin whose health check fails is skipped while it fails and taken
// back when it passes; with every origin failing, requests still go out.
func TestBalancerFollowsHealthChecks(t *testing.T) {
	a, bo := startOrigin(t, "a", nil), startOrigin(t, "b", nil)
	b, err := NewBalancer([]string{a.srv.URL, bo.srv.URL}, BalancerOptions{ProbeInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.unhealthy.Store(true)
	testenv.Eventually(t, 10*time.Second, "a out of the rotation", func() bool { return len(b.Healthy()) == 1 })
	for i := 0; i < 10; i++ {
		if body, err := get(t, b, "/x"); err != nil || !strings.HasPrefix(body, "b ") {
			t.Fatalf("request %d with a unhealthy: %q, %v", i, body, err)
		}
	}
	bo.unhealthy.Store(true)
	testenv.Eventually(t, 10*time.Second, "both out of the rotation", func() bool { return len(b.Healthy()) == 0 })
	if _, err := get(t, b, "/x"); err != nil {
		t.Errorf("with every origin failing its health check, a request was not tried: %v", err)
	}
	bo.unhealthy.Store(false)
	a.unhealthy.Store(false)
	testenv.Eventually(t, 10*time.Second, "both back", func() bool { return len(b.Healthy()) == 2 })
}

// A request with a body moves to the next origin after a refused connection
// only when it can be sent again; it then arrives whole.
func TestBalancerReplaysOnlyReplayableBodies(t *testing.T) {
	dead := startOrigin(t, "dead", nil)
	deadURL := dead.srv.URL
	dead.srv.Close()
	live := startOrigin(t, "live", nil)
	for _, replayable := range []bool{true, false} {
		// The first request of a new balancer goes to the first origin: the dead one.
		b, err := NewBalancer([]string{deadURL, live.srv.URL}, BalancerOptions{ProbeInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"url":"example.com"}`)
		req, _ := http.NewRequest(http.MethodPost, b.URL()+"/api/scan", bytes.NewReader(body))
		if !replayable {
			req.GetBody = nil
		}
		resp, err := b.RoundTrip(req)
		switch {
		case replayable && err != nil:
			t.Errorf("a replayable POST was not moved to the live origin: %v", err)
		case replayable:
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := "live POST /api/scan " + string(body); string(got) != want {
				t.Errorf("the live origin answered %q, want %q", got, want)
			}
		case err == nil:
			resp.Body.Close()
			t.Error("a POST whose body cannot be sent again was sent twice")
		}
		b.Close()
	}
}

func TestBalancerRefusesBadOrigins(t *testing.T) {
	for _, list := range [][]string{
		nil,
		{"origin-a:8081"},
		{"ftp://origin-a"},
		{"http://origin-a:8081/api"},
		{"http://user:pw@origin-a:8081"},
		{"http://origin-a:8081", "http://origin-a:8081/"},
	} {
		if b, err := NewBalancer(list, BalancerOptions{}); err == nil {
			b.Close()
			t.Errorf("NewBalancer(%q) accepted it", list)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("the error quotes the credentials: %v", err)
		}
	}
}
