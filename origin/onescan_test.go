package origin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/sse"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
)

// heldSite is a loopback TCP forwarder that holds every connection until
// released: a scan of it has started (scan.started is out, a worker is
// taken) and keeps running until the test lets it go on.
type heldSite struct {
	URL     string
	ln      net.Listener
	target  string
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
}

// holdSite forwards to target (host:port); a target nobody listens on makes
// every connection close unanswered once released.
func holdSite(t *testing.T, target string) *heldSite {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldSite{URL: "http://" + ln.Addr().String(), ln: ln, target: target, release: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.track(c)
			go h.forward(c)
		}
	}()
	t.Cleanup(func() {
		h.open()
		ln.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			c.Close()
		}
	})
	return h
}

func (h *heldSite) open() { h.once.Do(func() { close(h.release) }) }

func (h *heldSite) track(c net.Conn) {
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
}

func (h *heldSite) forward(c net.Conn) {
	defer c.Close()
	<-h.release
	up, err := net.Dial("tcp", h.target)
	if err != nil {
		return
	}
	h.track(up)
	defer up.Close()
	go func() {
		io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(c, up)
}

// hitKey names one request to a fixture site: the same path asked with
// another Accept or body is another request of one scan.
func hitKey(h fixture.Hit) string {
	return fmt.Sprintf("%s %s accept=%q body=%08x cond=%v", h.Method, h.Path, h.Accept, h.BodyHash, h.Conditional)
}

// requestedOnce fails unless the site saw each request exactly once: one
// scan's set of requests, however many clients asked.
func requestedOnce(t *testing.T, s *fixture.Site) {
	t.Helper()
	hits := s.Hits()
	if len(hits) == 0 {
		t.Fatal("the site was never requested")
	}
	seen := map[string]int{}
	for _, h := range hits {
		seen[hitKey(h)]++
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s requested %d times, want once (one scan for every client)", k, n)
		}
	}
}

// streamOf reads a whole event stream; safe from any goroutine.
func streamOf(ctx context.Context, hc *http.Client, u string) (*http.Response, []sse.Event, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp, nil, fmt.Errorf("%d %s: %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var evs []sse.Event
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err == io.EOF {
			return resp, evs, nil
		}
		if err != nil {
			return resp, evs, err
		}
		evs = append(evs, e)
	}
}

// do sends one request; safe from any goroutine.
func do(hc *http.Client, method, u, body string, hdr ...string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// answer is what one client of a shared scan received.
type answer struct {
	kind   string // sse, get, post, mcp
	status int
	xcache string
	body   []byte      // JSON answers; for mcp the structured content
	events []sse.Event // sse
	tool   *mcp.CallToolResult
	err    error
}

// clients runs n clients of one scan of target, cycling through the four
// ways to ask (event stream, JSON GET, POST, MCP scan_url), and returns
// once each has its answer. release is called once all n wait for the scan.
func clients(t *testing.T, o *testOrigin, target string, n int, release func()) []answer {
	t.Helper()
	key, err := engine.NormalizeURL(target)
	if err != nil {
		t.Fatal(err)
	}
	hc := edgetest.LoadContract(t).Client(t) // every answer checked against /openapi.json
	kinds := []string{"sse", "get", "post", "mcp"}
	sessions := map[int]*mcp.ClientSession{}
	for i := range n {
		if kinds[i%4] == "mcp" {
			sessions[i] = connect(t, o, "")
		}
	}
	out := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := answer{kind: kinds[i%4]}
			var resp *http.Response
			switch a.kind {
			case "sse":
				resp, a.events, a.err = streamOf(context.Background(), hc, scanURL(o, target, ""))
			case "get":
				resp, a.body, a.err = do(hc, "GET", scanURL(o, target, "&format=json"), "")
			case "post":
				resp, a.body, a.err = do(hc, "POST", o.URL+"/api/scan", `{"url":"`+target+`"}`, "Content-Type", "application/json")
			case "mcp":
				a.tool, a.err = sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "scan_url", Arguments: map[string]any{"url": target}})
				if a.err == nil {
					a.body, _ = json.Marshal(a.tool.StructuredContent)
				}
			}
			if resp != nil {
				a.status, a.xcache = resp.StatusCode, resp.Header.Get("X-Cache")
			}
			out[i] = a
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for joined := 0; joined < n; joined = o.srv.ScanWaiters(key.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d clients joined the scan of %s within 20s", joined, n, key)
		}
		time.Sleep(2 * time.Millisecond)
	}
	release()
	wg.Wait()
	for i, a := range out {
		if a.err != nil {
			t.Fatalf("client %d (%s): %v", i, a.kind, a.err)
		}
	}
	return out
}

// patientOrigin is startOrigin with one worker and a scanner that waits a
// minute for a site, so a held scan lasts until the test releases it, however
// slow the machine.
func patientOrigin(t *testing.T, cfg origin.Config) *testOrigin {
	t.Helper()
	st := embedded(t)
	cfg.AllowPrivate, cfg.Workers = true, 1
	sc := engine.New(engine.Options{Deadline: time.Minute, Fetch: fetch.Config{RequestTimeout: time.Minute, Policy: loopback.Policy()}})
	return serveOrigin(t, cfg, st, sc)
}

// busyWorker occupies the origin's only worker (Config.Workers 1) with a scan
// of a site that answers nothing until released; scans started meanwhile
// queue behind it, so their clients all join one waiting scan of a site the
// test does not need to proxy. release lets the busy scan fail, and returns
// once it has given the worker back. The origin must be a patientOrigin: with
// startOrigin's 5 s per request the busy scan would give up by itself.
func busyWorker(t *testing.T, o *testOrigin) (release func()) {
	t.Helper()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := closed.Addr().String()
	closed.Close()
	held := holdSite(t, dead)
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(http.DefaultClient, "GET", scanURL(o, held.URL, "&format=json"), "")
	}()
	testenv.Eventually(t, 10*time.Second, "a scan to hold the only worker", func() bool {
		return metricValue(t, o, "agentready_scans_running") == "1"
	})
	return func() {
		held.open()
		<-done
	}
}

// Twenty clients asking for one URL at once, through every transport, cost
// the site one scan (docs/benchmarks.md, "One scan path"), and all get that
// scan's result: the JSON report byte for byte, the stream's complete
// sequence ending in the same bytes, the brief of it, and the same report
// through MCP.
func TestOneScanForEveryTransport(t *testing.T) {
	o := patientOrigin(t, origin.Config{})
	s := site(t, "full")
	answers := clients(t, o, s.URL, 20, busyWorker(t, o))

	requestedOnce(t, s)
	// One for the scan that held the worker, one for the twenty clients.
	if got := metricValue(t, o, "agentready_scan_cache_misses_total"); got != "2" {
		t.Errorf("%s scans ran (with the one holding the worker) for 20 concurrent clients, want 2", got)
	}
	var raw []byte
	for _, a := range answers {
		if a.kind == "get" {
			raw = a.body
			break
		}
	}
	var want struct {
		URL       string          `json:"url"`
		Timestamp time.Time       `json:"timestamp"`
		Score     json.RawMessage `json:"score"`
		Checks    json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal(raw, &want); err != nil || len(want.Checks) == 0 {
		t.Fatalf("the JSON report: %v %.200s", err, raw)
	}
	var full report.Result
	json.Unmarshal(raw, &full)
	brief, _ := json.Marshal(full.Brief())

	for i, a := range answers {
		name := fmt.Sprintf("client %d (%s)", i, a.kind)
		switch a.kind {
		case "get", "post", "sse":
			if a.status != 200 {
				t.Errorf("%s: status %d: %.200s", name, a.status, a.body)
				continue
			}
			if a.xcache != "MISS" {
				t.Errorf("%s: X-Cache %q: every client joined the running scan, none could read the cache", name, a.xcache)
			}
		}
		switch a.kind {
		case "get":
			if string(a.body) != string(raw) {
				t.Errorf("%s: a different report than the other JSON clients", name)
			}
		case "post":
			if !jsonEqual(string(a.body), string(brief)) {
				t.Errorf("%s: the brief is not the brief of the shared report: %.200s", name, a.body)
			}
		case "sse":
			if completed := checkSequence(t, a.events, false); completed != string(raw) {
				t.Errorf("%s: scan.completed differs from the JSON report", name)
			}
		case "mcp":
			var got struct {
				URL       string          `json:"url"`
				Timestamp time.Time       `json:"timestamp"`
				Score     json.RawMessage `json:"score"`
				Checks    json.RawMessage `json:"checks"`
			}
			if a.tool.IsError || json.Unmarshal(a.body, &got) != nil {
				t.Errorf("%s: %s", name, errText(a.tool))
				continue
			}
			if got.URL != want.URL || !got.Timestamp.Equal(want.Timestamp) || !jsonEqual(string(got.Score), string(want.Score)) || !jsonEqual(string(got.Checks), string(want.Checks)) {
				t.Errorf("%s: scan_url answered another scan (url %s, timestamp %s) than the JSON clients (%s, %s)", name, got.URL, got.Timestamp, want.URL, want.Timestamp)
			}
		}
	}
}

// A failed scan reaches every client that waited for it, in each
// transport's form, and is tried once.
func TestOneScanErrorForEveryTransport(t *testing.T) {
	o := patientOrigin(t, origin.Config{})
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	answers := clients(t, o, dead, 8, busyWorker(t, o))
	// One for the scan that held the worker, one for the eight clients.
	if got := metricValue(t, o, "agentready_scans_failed_total"); got != "2" {
		t.Errorf("%s failed scans (with the one holding the worker) for 8 concurrent clients, want 2", got)
	}
	for i, a := range answers {
		name := fmt.Sprintf("client %d (%s)", i, a.kind)
		switch a.kind {
		case "get", "post":
			if a.status != 422 || string(envelope(t, a.body).Code) != "site_unreachable" {
				t.Errorf("%s: %d %.200s, want 422 site_unreachable", name, a.status, a.body)
			}
		case "sse":
			if len(a.events) < 2 || a.events[0].Name != origin.EventStarted {
				t.Errorf("%s: the stream did not start with scan.started: %v", name, a.events)
				continue
			}
			if last := a.events[len(a.events)-1]; last.Name != origin.EventError || string(envelope(t, []byte(last.Data)).Code) != "site_unreachable" {
				t.Errorf("%s: last event %s %.200s, want an error event with site_unreachable", name, last.Name, last.Data)
			}
		case "mcp":
			if !a.tool.IsError || !strings.Contains(errText(a.tool), "site unreachable") {
				t.Errorf("%s: %s, want a tool error saying the site is unreachable", name, errText(a.tool))
			}
		}
	}
}

// A stream that joins a running scan gets its whole sequence from
// scan.started; a stream that leaves does not cancel the scan others wait
// for, and the site is still scanned once.
func TestStreamJoinsAndLeavesRunningScan(t *testing.T) {
	o := patientOrigin(t, origin.Config{Heartbeat: 10 * time.Millisecond})
	// A site that never links to its own address: through the forwarder it
	// is requested exactly as directly.
	s := site(t, "empty")
	held := holdSite(t, hostOf(s.URL))
	key := held.URL + "/"
	waiters := func(n int) func() bool { return func() bool { return o.srv.ScanWaiters(key) == n } }
	hc := edgetest.LoadContract(t).Client(t)

	// The first stream starts the scan and leaves after scan.started.
	leaving, leave := context.WithCancel(context.Background())
	defer leave()
	req, _ := http.NewRequestWithContext(leaving, "GET", scanURL(o, held.URL, ""), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := sse.NewReader(resp.Body).Next(); err != nil || e.Name != origin.EventStarted {
		t.Fatalf("the first stream's first event: %v %v", e, err)
	}
	// A second stream and a JSON client join it.
	type result struct {
		resp *http.Response
		evs  []sse.Event
		body []byte
		err  error
	}
	late, plain := make(chan result, 1), make(chan result, 1)
	go func() {
		r, evs, err := streamOf(context.Background(), hc, scanURL(o, held.URL, ""))
		late <- result{resp: r, evs: evs, err: err}
	}()
	testenv.Eventually(t, 5*time.Second, "the second stream to join", waiters(2))
	go func() {
		r, b, err := do(hc, "GET", scanURL(o, held.URL, "&format=json"), "")
		plain <- result{resp: r, body: b, err: err}
	}()
	testenv.Eventually(t, 5*time.Second, "the JSON client to join", waiters(3))
	leave()
	resp.Body.Close()
	testenv.Eventually(t, 5*time.Second, "the first stream to leave the scan", waiters(2))
	held.open()

	j := <-plain
	if j.err != nil || j.resp.StatusCode != 200 || j.resp.Header.Get("X-Cache") != "MISS" {
		t.Fatalf("the JSON client after a stream left: %v %v", j.err, j.resp)
	}
	l := <-late
	if l.err != nil {
		t.Fatal(l.err)
	}
	if completed := checkSequence(t, l.evs, false); completed != string(j.body) {
		t.Error("the late stream's scan.completed differs from the JSON report")
	}
	requestedOnce(t, s)
	if got := metricValue(t, o, "agentready_scan_cache_misses_total"); got != "1" {
		t.Errorf("%s scans ran, want 1", got)
	}
}

// Whatever transport answered a scan, the showcase already knows it: history
// is written before the answer, so reading it right after needs no waiting.
func TestAnsweredScanIsInHistory(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	cs := connect(t, o, "")
	hc := edgetest.LoadContract(t).Client(t)
	inHistory := func(u string) bool {
		top, _, err := o.store.History().Top(context.Background(), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range top {
			if e.URL == u {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		name string
		scan func(target string) error
	}{
		{"json", func(target string) error {
			resp, b, err := do(hc, "GET", scanURL(o, target, "&format=json"), "")
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("%d %.200s", resp.StatusCode, b)
			}
			return err
		}},
		{"post", func(target string) error {
			resp, b, err := do(hc, "POST", o.URL+"/api/scan", `{"url":"`+target+`"}`, "Content-Type", "application/json")
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("%d %.200s", resp.StatusCode, b)
			}
			return err
		}},
		{"sse", func(target string) error {
			// Read up to scan.completed only: the check runs while the
			// stream is still open.
			resp, err := hc.Get(scanURL(o, target, ""))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			r := sse.NewReader(resp.Body)
			for {
				e, err := r.Next()
				if err != nil {
					return fmt.Errorf("the stream ended before scan.completed: %v", err)
				}
				if e.Name == origin.EventCompleted {
					return nil
				}
			}
		}},
		{"mcp", func(target string) error {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scan_url", Arguments: map[string]any{"url": target}})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", errText(res))
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := site(t, "peer")
			if err := tc.scan(s.URL); err != nil {
				t.Fatal(err)
			}
			if !inHistory(s.URL + "/") {
				t.Errorf("the %s scan answered before its history entry was written", tc.name)
			}
		})
	}
}
