package origin_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

// raw sends one request as written (from the local address from, if set)
// and reads one response.
func raw(t *testing.T, addr, from, req string) (*http.Response, []byte) {
	t.Helper()
	c := dialFrom(t, addr, from)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatalf("writing the request: %v", err)
	}
	return readResponse(t, c)
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

func hostOf(u string) string { return strings.TrimPrefix(u, "http://") }

// Requests with oversized parts get 414/431 envelopes that say which part is
// too long; none echoes request bytes (the bearer token, the cookie, the
// edge's identity headers), and sizes that real clients send work.
func TestOversizedRequestsNeverEcho(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String() + "/"
	closed.Close()
	const secret = "s3cr3t-token-value"
	bearer := "Authorization: Bearer " + secret + "\r\n"
	// The edge's identity headers, unsigned here: requests that reach the
	// router with them are refused as invalid_identity, so they go only with
	// requests refused before that.
	identityHdrs := bearer + "X-Agentready-Caller: anon.SECRETCALLER\r\nX-Agentready-Caller-Sig: SECRETSIG\r\nX-Agentready-Caller-Ts: 1\r\nX-Agentready-Client-Ip: 10.9.8.7\r\n"
	pad := func(n int) string { return strings.Repeat("Q", n) }
	get := func(target, hdr string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + hdr + "\r\n"
	}
	postJSON := func(hdr, body string) string {
		return "POST /api/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + hdr + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	scanPath := "/api/scan?format=json&url=" + url.QueryEscape(dead)
	cases := []struct {
		name, req string
		status    int
		code      string
	}{
		// What clients really send passes.
		{"3.5 KB url", get(scanPath+"%3F"+pad(3500), bearer), 400, "invalid_url"}, // the scanner's own 2048-character limit, said as such
		{"3.8 KB cookie", get("/healthz", bearer+"Cookie: c="+pad(3800)+"\r\n"), 200, ""},
		{"8 KB of headers", get("/healthz", bearer+"X-A: "+pad(4000)+"\r\nX-B: "+pad(4000)+"\r\n"), 200, ""},
		{"5 KB Idempotency-Key", postJSON(bearer+"Idempotency-Key: "+pad(5000)+"\r\n", `{"url":"`+dead+`"}`), 400, "invalid_idempotency_key"},
		// Over the limits: an envelope naming the part.
		{"10 KB url", get(scanPath+"&pad="+pad(10000), identityHdrs), 414, "url_too_long"},
		{"24 KB cookie", get("/healthz", identityHdrs+"Cookie: c="+pad(24000)+"\r\n"), 431, "headers_too_large"},
		{"40 KB cookie (over the read buffer)", get("/healthz", identityHdrs+"Cookie: c="+pad(40000)+"\r\n"), 431, "headers_too_large"},
		{"40 KB url (over the read buffer)", get(scanPath+"&pad="+pad(40000), identityHdrs), 431, "headers_too_large"},
		// Not HTTP: fasthttp's own errors, in fixed words.
		{"garbage request line", "NOT HTTP AT ALL " + secret + "\r\n" + identityHdrs + "\r\n", 400, "bad_request"},
		{"bad chunked body", "POST /api/scan HTTP/1.1\r\nHost: x\r\n" + identityHdrs + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz" + secret + "\r\n", 400, "bad_request"},
		{"body over the limit", "POST /api/scan HTTP/1.1\r\nHost: x\r\n" + identityHdrs + "Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n", 413, "payload_too_large"},
	}
	for _, c := range cases {
		resp, b := raw(t, hostOf(o.URL), "", c.req)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %.300s", c.name, resp.StatusCode, b)
			continue
		}
		if c.code != "" {
			if e := envelope(t, b); string(e.Code) != c.code {
				t.Errorf("%s: code %s", c.name, e.Code)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: Content-Type %q", c.name, resp.Header.Get("Content-Type"))
			}
		}
		var all strings.Builder
		resp.Header.Write(&all)
		all.Write(b)
		for _, leak := range []string{secret, "SECRETCALLER", "SECRETSIG", "10.9.8.7", "QQQQ", "contents", "fasthttp"} {
			if strings.Contains(all.String(), leak) {
				t.Errorf("%s: the answer contains %q: %.400s", c.name, leak, all.String())
			}
		}
	}
}

// Every backend the origin's state can live in: the embedded file always,
// Redis when REDIS_URL is set (CI=true demands it).
func stateBackends(t *testing.T) map[string]func(t *testing.T) store.Backend {
	m := map[string]func(t *testing.T) store.Backend{"embedded": func(t *testing.T) store.Backend { return embedded(t) }}
	u := os.Getenv("REDIS_URL")
	if testenv.Optional(t, u != "", "REDIS_URL: the Redis backend") {
		m["redis"] = func(t *testing.T) store.Backend {
			r, err := store.OpenRedis(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r.WithPrefix(fmt.Sprintf("agentready-test:%s:%d:", t.Name(), time.Now().UnixNano()))
		}
	}
	return m
}

// fingerprint is what the origin keys a POST /api/scan body on: the method
// and path, then the body.
func fingerprint(body string) string {
	sum := sha256.Sum256([]byte("POST /api/scan\n" + body))
	return hex.EncodeToString(sum[:])
}

// An empty Idempotency-Key is refused as documented, not taken for absent;
// a key held by a request whose origin died answers 409 with Retry-After
// equal to the lease left, and is served once that has passed.
func TestIdempotencyKeyEdgeCases(t *testing.T) {
	s := site(t, "empty")
	body := `{"url":"` + s.URL + `"}`
	for name, open := range stateBackends(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			o := startOrigin(t, origin.Config{}, st)
			post := func(hdr string) (*http.Response, []byte) {
				return raw(t, hostOf(o.URL), "", "POST /api/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+hdr+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			}
			for _, hdr := range []string{"Idempotency-Key:\r\n", "Idempotency-Key: \r\n", "Idempotency-Key: a\r\nIdempotency-Key: b\r\n"} {
				if resp, b := post(hdr); resp.StatusCode != 400 || envelope(t, b).Code != "invalid_idempotency_key" {
					t.Errorf("%q: %d %s", hdr, resp.StatusCode, b)
				}
			}
			if resp, b := post(""); resp.StatusCode != 200 {
				t.Fatalf("without a key: %d %s", resp.StatusCode, b)
			}
			// A holder that died: its lease is what the store says, nothing renews it.
			scope := identity.Caller{Tier: identity.Anonymous, Subject: "127.0.0.1"}.Key()
			if c, _, err := st.Idempotency().Begin(context.Background(), scope, "orphan", fingerprint(body), 2500*time.Millisecond); c == nil || err != nil {
				t.Fatalf("claiming for the dead holder: %v", err)
			}
			resp, b := post("Idempotency-Key: orphan\r\n")
			first := time.Now()
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if resp.StatusCode != 409 || envelope(t, b).Code != "idempotency_in_flight" || wait < 2 || wait > 3 {
				t.Fatalf("orphaned key: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
			}
			deadline := first.Add(time.Duration(wait)*time.Second + time.Second)
			for {
				resp, b = post("Idempotency-Key: orphan\r\n")
				if resp.StatusCode != 409 {
					break
				}
				if left, _ := strconv.Atoi(resp.Header.Get("Retry-After")); left < 1 || left > wait {
					t.Errorf("Retry-After grew or vanished while waiting: %q", resp.Header.Get("Retry-After"))
				}
				if time.Now().After(deadline) {
					t.Fatalf("still 409 %s after the Retry-After of %d s", time.Since(first).Round(time.Millisecond), wait)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("after the lease: %d %s", resp.StatusCode, b)
			}
			if took := time.Since(first); took < time.Duration(wait-1)*time.Second {
				t.Errorf("the key was free after %s, long before its Retry-After of %d s", took, wait)
			}
		})
	}
}

// With the embedded state, keys left in flight by a process that died are
// free as soon as the origin starts again, not after their lease.
func TestEmbeddedRestartFreesOrphanedKeys(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := site(t, "empty")
	body := `{"url":"` + s.URL + `"}`
	scope := identity.Caller{Tier: identity.Anonymous, Subject: "127.0.0.1"}.Key()
	if c, _, _ := st.Idempotency().Begin(context.Background(), scope, "orphan", fingerprint(body), time.Hour); c == nil {
		t.Fatal("claim")
	}
	st.Close()
	st, err = store.OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := startOrigin(t, origin.Config{}, st)
	resp, b := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "orphan")
	if resp.StatusCode != 200 {
		t.Fatalf("after a restart the orphaned key answers %d %s", resp.StatusCode, b)
	}
}

// A live request's key stays held for as long as the request runs, even
// past its lease (renewed), and the 409 says at most the lease left.
func TestIdempotencyLeaseRenewed(t *testing.T) {
	const lease = 500 * time.Millisecond
	o := startOrigin(t, origin.Config{IdempotencyLease: lease}, nil)
	s := site(t, "peer", fixture.WithDelay(time.Second)) // two rounds: the scan takes over 2 s
	body := `{"url":"` + s.URL + `"}`
	done := make(chan int, 1)
	go func() {
		resp, _ := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "long")
		done <- resp.StatusCode
	}()
	// The key is claimed before the scan touches the site.
	testenv.Eventually(t, 5*time.Second, "the scan to start", func() bool { return len(s.Hits()) > 0 })
	claimed := time.Now()
	for time.Since(claimed) < 3*lease {
		time.Sleep(50 * time.Millisecond)
	}
	resp, b := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "long")
	select {
	case code := <-done:
		t.Fatalf("the first request ended (%d) before the check; the fixture is too fast", code)
	default:
	}
	if resp.StatusCode != 409 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("three leases into the request: %d Retry-After %q %s (want 409: the lease is renewed)", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if code := <-done; code != 200 {
		t.Fatalf("the request ended with %d", code)
	}
	resp, _ = post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "long")
	if resp.Header.Get("Idempotent-Replayed") != "true" {
		t.Error("the finished request's response is not replayed")
	}
}

// The origin closes a connection whose request trickles in (1 byte every
// 100 ms) after its read timeout, answering 408; one client address holds
// at most MaxConnsPerIP connections while others are served.
func TestOriginSlowClientsAndConnectionCap(t *testing.T) {
	o := startOrigin(t, origin.Config{ReadTimeout: 700 * time.Millisecond, MaxConnsPerIP: 4, CapLoopback: true}, nil)
	addr := hostOf(o.URL)
	t.Run("drip-fed body", func(t *testing.T) {
		c := dialFrom(t, addr, "127.0.0.9")
		defer c.Close()
		start := time.Now()
		io.WriteString(c, "POST /api/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
		stop := make(chan struct{})
		go func() {
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
		}()
		defer close(stop)
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net
		resp, b := readResponse(t, c)
		if resp.StatusCode != 408 || envelope(t, b).Code != "request_timeout" {
			t.Errorf("drip-fed body: %d %s", resp.StatusCode, b)
		}
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("the connection stays open after the 408")
		}
		// A relation, not a budget: the 100-byte body would take 10 s to
		// drip in, and the default read timeout is 15 s; the configured
		// 700 ms cut it in less than half the drip's time.
		if took := time.Since(start); took >= 5*time.Second {
			t.Errorf("the drip-fed connection was held %s (read timeout 700ms, the drip 10 s)", took)
		}
	})
	t.Run("connections per address", func(t *testing.T) {
		var held []net.Conn
		for i := 0; i < 4; i++ {
			held = append(held, dialFrom(t, addr, "127.0.0.3"))
		}
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		// A fifth connection from the same address is refused at once.
		c := dialFrom(t, addr, "127.0.0.3")
		c.SetDeadline(time.Now().Add(30 * time.Second)) // a safety net
		resp, b := readResponse(t, c)
		c.Close()
		if resp.StatusCode != 429 || envelope(t, b).Code != "too_many_connections" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("fifth connection: %d %s", resp.StatusCode, b)
		}
		// Another address is served meanwhile.
		if resp, b := raw(t, addr, "127.0.0.4", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
			t.Errorf("another address: %d %s", resp.StatusCode, b)
		}
		// Closing one frees a slot.
		held[0].Close()
		held = held[1:]
		testenv.Eventually(t, 30*time.Second, "a freed slot to be usable", func() bool {
			resp, _ := raw(t, addr, "127.0.0.3", "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			return resp.StatusCode == 200
		})
	})
}

// A frozen Redis (SIGSTOP) answers nothing; /healthz and /api/scan must
// still answer, 503 with Retry-After, within a few of the store's call
// timeouts (made 1 s here, so that the bound is a relation a loaded machine
// keeps: a request answers after the calls it made timed out, not when Redis
// comes back), and the service must come back by itself when Redis does.
// (The figures with the default 500 ms: go run ./bench/hardenbench -part redis.)
func TestFrozenRedis(t *testing.T) {
	srv := redistest.Start(t)
	const callTimeout = time.Second
	r, err := store.OpenRedisWith(context.Background(), srv.URL, store.RedisOptions{CallTimeout: callTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := startOrigin(t, origin.Config{}, r)
	s := site(t, "empty")
	if resp, b := get(t, o.URL+"/healthz"); resp.StatusCode != 200 {
		t.Fatalf("healthz before: %d %s", resp.StatusCode, b)
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
	const bound = 3 * callTimeout
	type probe struct {
		name, method, path, body, code string
	}
	probes := []probe{
		{"healthz", "GET", "/healthz", "", ""},
		{"scan", "GET", "/api/scan?format=json&url=" + url.QueryEscape(s.URL), "", "state_unavailable"},
		{"idempotent post", "POST", "/api/scan", `{"url":"` + s.URL + `"}`, "state_unavailable"},
	}
	// Concurrent requests: the first ones wait for the call timeout, the
	// breaker then fails the rest at once; none may wait longer than bound.
	var wg sync.WaitGroup
	for round := 0; round < 3; round++ {
		for _, p := range probes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(p.method, o.URL+p.path, strings.NewReader(p.body))
				if p.method == "POST" {
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", "frozen-"+strconv.Itoa(round))
				}
				start := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("%s: %v", p.name, err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				t.Logf("%s while frozen: %d in %s", p.name, resp.StatusCode, took.Round(time.Millisecond))
				if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || took > bound {
					t.Errorf("%s while frozen: %d Retry-After %q after %s: %s", p.name, resp.StatusCode, resp.Header.Get("Retry-After"), took, b)
				}
				if p.code != "" && string(envelope(t, b).Code) != p.code {
					t.Errorf("%s: %s", p.name, b)
				}
				if strings.Contains(string(b), srv.Addr) {
					t.Errorf("%s: the answer names Redis's address: %s", p.name, b)
				}
			}()
		}
		wg.Wait()
	}
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	thawed = true
	start := time.Now()
	testenv.Eventually(t, 30*time.Second, "the service to recover after the thaw", func() bool {
		resp, _ := get(t, o.URL+"/healthz")
		return resp.StatusCode == 200
	})
	t.Logf("healthz 200 again %s after the thaw", time.Since(start).Round(time.Millisecond))
	if resp, b := get(t, scanURL(o, s.URL, "&format=json")); resp.StatusCode != 200 {
		t.Errorf("scan after the thaw: %d %s", resp.StatusCode, b)
	}
}

// A streamed scan that ends in site_unreachable is counted and audited with
// that outcome, not with the 200 its status line carried.
func TestStreamedOutcomeRecorded(t *testing.T) {
	var buf syncBuffer
	o := startOrigin(t, origin.Config{Audit: slog.New(slog.NewJSONHandler(&buf, nil))}, nil)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	evs := readStream(t, scanURL(o, dead, ""))
	if last := evs[len(evs)-1]; last.Name != origin.EventError {
		t.Fatalf("last event %s", last.Name)
	}
	testenv.Eventually(t, 30*time.Second, "the stream's audit line", func() bool { return strings.Contains(buf.String(), `"outcome"`) })
	if line := buf.String(); !strings.Contains(line, `"outcome":"422 site_unreachable"`) || !strings.Contains(line, `"action":"scan"`) {
		t.Errorf("audit: %s", line)
	}
	if m := scrape(t, o); !strings.Contains(m, `agentready_http_requests_total{route="/api/scan",status="422"} 1`) || strings.Contains(m, `route="/api/scan",status="200"`) {
		t.Errorf("metrics:\n%s", m)
	}
	// A completed stream counts as 200.
	s := site(t, "empty")
	readStream(t, scanURL(o, s.URL, ""))
	testenv.Eventually(t, 30*time.Second, "the completed stream's count", func() bool {
		return strings.Contains(scrape(t, o), `agentready_http_requests_total{route="/api/scan",status="200"} 1`)
	})
}
