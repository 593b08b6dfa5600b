package stack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

func start(t *testing.T, o stack.Options) *stack.Stack {
	t.Helper()
	if o.Store == nil {
		st, err := store.OpenEmbedded(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o.Store = st
	}
	o.Addr, o.AllowPrivate = "127.0.0.1:0", true
	svc, err := stack.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})
	return svc
}

func site(t *testing.T, name string, opts ...fixture.Option) *fixture.Site {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "..", "testdata", "sites", name), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func dialFrom(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readResponse(t *testing.T, c net.Conn) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func raw(t *testing.T, addr, from, req string) (*http.Response, []byte) {
	t.Helper()
	c := dialFrom(t, addr, from)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	return readResponse(t, c)
}

// envelope checks b is the API's error envelope and returns it.
func envelope(t *testing.T, what string, resp *http.Response, b []byte) report.ErrorEnvelope {
	t.Helper()
	var e report.ErrorEnvelope
	if err := json.Unmarshal(b, &e); err != nil || e.Error == "" || e.Code == "" || e.Message == "" || !strings.HasPrefix(e.Docs, "https://") {
		t.Errorf("%s: not an error envelope: %d %.300q", what, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	return e
}

// Oversized and malformed requests get envelopes that say what is wrong,
// echo nothing, and cost nothing: they never reach the edge's handler, so
// the allowance the edge reports is unchanged after them.
func TestPublicLimitsAreEnvelopesAndFree(t *testing.T) {
	svc := start(t, stack.Options{})
	addr := strings.TrimPrefix(svc.URL, "http://")
	s := site(t, "empty")
	remaining := func() int {
		t.Helper()
		resp, err := http.Get(svc.URL + "/api/allowance-probe") // any /api/ path reports the allowance without spending it
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		n, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("no allowance header: %v", resp.Header)
		}
		return n
	}
	before := remaining()
	const secret = "s3cr3t-token-value"
	pad := func(n int) string { return strings.Repeat("Q", n) }
	scan := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	get := func(target, hdr string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + "\r\n" + hdr + "\r\n"
	}
	for _, c := range []struct {
		name, req string
		status    int
		code      string
	}{
		{"10 KB url", get(scan+"&pad="+pad(10000), ""), 414, "url_too_long"},
		{"20 KB cookie", get(scan, "Cookie: c="+pad(20000)+"\r\n"), 431, "headers_too_large"},
		{"70 KB cookie (net/http's own 431)", get(scan, "Cookie: c="+pad(70000)+"\r\n"), 431, "headers_too_large"},
		{"70 KB url (net/http's own 431)", get(scan+"&pad="+pad(70000), ""), 431, "headers_too_large"},
		{"garbage", "NOT HTTP " + secret + "\r\n\r\n", 400, "bad_request"},
		{"no Host", "GET " + scan + " HTTP/1.1\r\nAuthorization: Bearer " + secret + "\r\n\r\n", 400, "bad_request"},
		{"bad header name", "GET " + scan + " HTTP/1.1\r\nHost: x\r\nBad Header" + secret + ": v\r\n\r\n", 400, "bad_request"},
		{"unknown transfer coding", "POST " + scan + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + secret + "\r\n\r\n", 501, "not_implemented"},
	} {
		resp, b := raw(t, addr, "", c.req)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %.300s", c.name, resp.StatusCode, b)
			continue
		}
		if e := envelope(t, c.name, resp, b); string(e.Code) != c.code {
			t.Errorf("%s: code %q, want %q", c.name, e.Code, c.code)
		}
		var all strings.Builder
		resp.Header.Write(&all)
		all.Write(b)
		for _, leak := range []string{secret, "QQQQ"} {
			if strings.Contains(all.String(), leak) {
				t.Errorf("%s: the answer contains %q", c.name, leak)
			}
		}
	}
	if after := remaining(); after != before {
		t.Errorf("refused requests were charged: allowance %d before, %d after", before, after)
	}
	// The probe is honest: a real scan is charged.
	resp, err := http.Get(svc.URL + scan)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scan: %d", resp.StatusCode)
	}
	if after := remaining(); after != before-1 {
		t.Errorf("a real scan: allowance %d before, %d after", before, after)
	}
}

// Slow clients are cut off by the timeouts: a body that trickles in gets a
// 408 envelope, headers that trickle in get the connection closed.
//
// The bound is a relation: the configured timeouts (1 s together) cut the
// connection in less than half the defaults' 10 s for headers (the bound
// were the options ignored) and long before the drip would end (a
// 1000-byte body at 10 bytes a second; headers never).
func TestPublicSlowClients(t *testing.T) {
	const cut = 5 * time.Second // half the default header timeout
	svc := start(t, stack.Options{HeaderTimeout: 500 * time.Millisecond, BodyTimeout: 500 * time.Millisecond})
	addr := strings.TrimPrefix(svc.URL, "http://")
	drip := func(c net.Conn, stop chan struct{}) {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}
	t.Run("body", func(t *testing.T) {
		c := dialFrom(t, addr, "")
		defer c.Close()
		start := time.Now()
		io.WriteString(c, "POST /api/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"url\":\"")
		stop := make(chan struct{})
		defer close(stop)
		go drip(c, stop)
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net
		resp, b := readResponse(t, c)
		if e := envelope(t, "drip-fed body", resp, b); resp.StatusCode != 408 || e.Code != "request_timeout" {
			t.Errorf("drip-fed body: %d %s", resp.StatusCode, b)
		}
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("the connection stays open after the 408")
		}
		if took := time.Since(start); took >= cut {
			t.Errorf("held %s with a 500ms body timeout: the default timeouts cut it, not the configured ones", took)
		}
	})
	t.Run("headers", func(t *testing.T) {
		c := dialFrom(t, addr, "")
		defer c.Close()
		start := time.Now()
		io.WriteString(c, "GET /api/scan HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		stop := make(chan struct{})
		defer close(stop)
		go drip(c, stop)
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net
		// Closed by the server: EOF, or a reset when the drip's last bytes
		// were unread; not our own deadline.
		if _, err := io.ReadAll(c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the connection was not closed by the server: %v", err)
		}
		if took := time.Since(start); took >= cut {
			t.Errorf("held %s with a 500ms header timeout: the default timeout cut it, not the configured one", took)
		}
	})
	t.Run("a long answer outlives the read timeout", func(t *testing.T) {
		// The read timeout bounds the upload only: a request whose answer
		// takes longer than it still gets the answer.
		s := site(t, "peer", fixture.WithDelay(500*time.Millisecond)) // a scan of two seconds
		body := `{"url":"` + s.URL + `"}`
		start := time.Now()
		req, _ := http.NewRequest("POST", svc.URL+"/api/scan", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || !json.Valid(b) {
			t.Errorf("POST scan: %d %v %.200s", resp.StatusCode, err, b)
		}
		if took := time.Since(start); took < 1100*time.Millisecond {
			t.Errorf("the scan took %s, not longer than the 1 s read timeout: the test proves nothing", took)
		}
	})
}

// One address holds at most MaxConnsPerIP connections; the next one is
// answered 429 and closed while other addresses are served, and a closed
// connection frees its slot.
func TestPublicConnectionCap(t *testing.T) {
	svc := start(t, stack.Options{MaxConnsPerIP: 4, CapLoopback: true})
	addr := strings.TrimPrefix(svc.URL, "http://")
	var held []net.Conn
	for i := 0; i < 4; i++ {
		held = append(held, dialFrom(t, addr, "127.0.0.5"))
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	c := dialFrom(t, addr, "127.0.0.5")
	io.WriteString(c, "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a safety net: the refusal comes at once
	resp, b := readResponse(t, c)
	c.Close()
	if e := envelope(t, "fifth connection", resp, b); resp.StatusCode != 429 || e.Code != "too_many_connections" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("fifth connection: %d %s", resp.StatusCode, b)
	}
	if resp, b := raw(t, addr, "127.0.0.6", "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("another address: %d %.200s", resp.StatusCode, b)
	}
	held[0].Close()
	held = held[1:]
	testenv.Eventually(t, 30*time.Second, "the freed slot to be usable", func() bool {
		resp, _ := raw(t, addr, "127.0.0.5", "GET /openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		return resp.StatusCode == 200
	})
}

// With Redis frozen, what the edge has cached (badges, discovery documents)
// keeps being served at once, and scans answer 503 quickly instead of
// hanging; everything works again after the thaw.
//
// "At once" and "quickly" are relations to the store's call timeout, made
// long here (2 s): a request that asked the frozen Redis anything waits at
// least one call timeout, so a cached answer must come within half of one,
// and a scan's 503 within a few (it asks the rate limiter and the scan cache,
// each bounded by one), far short of the scan's deadline or the thaw.
func TestStackWithFrozenRedis(t *testing.T) {
	srv := redistest.Start(t)
	const callTimeout = 2 * time.Second
	r, err := store.OpenRedisWith(context.Background(), srv.URL, store.RedisOptions{CallTimeout: callTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	svc := start(t, stack.Options{Store: r})
	s := site(t, "empty")
	badge := svc.URL + "/api/badge?url=" + url.QueryEscape(s.URL)
	cachedURLs := []string{badge, svc.URL + "/openapi.json"}
	for _, u := range cachedURLs {
		if resp, err := http.Get(u); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s before: %v %v", u, err, resp)
		}
	}
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			srv.Thaw()
		}
	}()
	client := &http.Client{Timeout: time.Minute} // a safety net against a hang
	timed := func(u string) (int, time.Duration) {
		start := time.Now()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	for _, u := range cachedURLs {
		if code, took := timed(u); code != 200 || took >= callTimeout/2 {
			t.Errorf("%s from the edge's cache while Redis is frozen: %d after %s (a call to Redis waits %s)", u, code, took, callTimeout)
		}
	}
	scan := svc.URL + "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	for i := 0; i < 3; i++ {
		code, took := timed(scan)
		t.Logf("scan while frozen: %d in %s", code, took.Round(time.Millisecond))
		if code != 503 || took >= 4*callTimeout {
			t.Errorf("scan while Redis is frozen: %d after %s (call timeout %s)", code, took, callTimeout)
		}
	}
	srv.Thaw()
	thawed = true
	testenv.Eventually(t, 30*time.Second, "scans to work again after the thaw", func() bool {
		code, _ := timed(scan)
		return code == 200
	})
}
