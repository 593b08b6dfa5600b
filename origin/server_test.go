package origin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/sse"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

type testOrigin struct {
	URL   string
	srv   *origin.Server
	store store.Backend
}

func embedded(t testing.TB) store.Backend {
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func startOrigin(t *testing.T, cfg origin.Config, st store.Backend) *testOrigin {
	t.Helper()
	if st == nil {
		st = embedded(t)
	}
	cfg.AllowPrivate = true
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: loopback.Policy()}})
	return serveOrigin(t, cfg, st, sc)
}

// serveOrigin runs an origin over st and sc on a loopback port until the test ends.
func serveOrigin(t testing.TB, cfg origin.Config, st store.Backend, sc *engine.Scanner) *testOrigin {
	t.Helper()
	srv := origin.New(cfg, st, sc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return &testOrigin{URL: "http://" + ln.Addr().String(), srv: srv, store: st}
}

func site(t testing.TB, name string, opts ...fixture.Option) *fixture.Site {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "testdata", "sites", name), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return testenv.Do(t, edgetest.LoadContract(t).Client(t), testenv.Request(t, "GET", u, "", hdr...)) // checked against /openapi.json
}

func post(t *testing.T, client *http.Client, u, ctype, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	if ctype != "" {
		hdr = append([]string{"Content-Type", ctype}, hdr...)
	}
	req := testenv.Request(t, "POST", u, body, hdr...)
	if client == nil {
		client = http.DefaultClient
	}
	// Checked against /openapi.json, whichever transport the caller chose.
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	checked := *client
	checked.Transport = edgetest.LoadContract(t).Wrap(t, next)
	return testenv.Do(t, &checked, req)
}

func scanURL(o *testOrigin, target string, extra string) string {
	return o.URL + "/api/scan?url=" + url.QueryEscape(target) + extra
}

func envelope(t *testing.T, b []byte) report.ErrorEnvelope {
	t.Helper()
	var e report.ErrorEnvelope
	if err := json.Unmarshal(b, &e); err != nil || e.Error == "" || e.Code == "" || e.Message == "" || e.Docs == "" {
		t.Fatalf("not an error envelope: %s", b)
	}
	return e
}

func TestJSONScanAndCache(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "full")
	resp, first := get(t, scanURL(o, s.URL, "&format=json"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Cache") != "MISS" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	var r report.Result
	if err := json.Unmarshal(first, &r); err != nil || len(r.Checks) != 48 || r.CurrentLevel != 3 {
		t.Fatalf("report: %v, %d checks", err, len(r.Checks))
	}
	hits := len(s.Hits())
	resp, second := get(t, scanURL(o, s.URL, ""), "Accept", "application/json")
	if resp.Header.Get("X-Cache") != "HIT" || resp.Header.Get("Age") == "" || !bytes.Equal(first, second) {
		t.Errorf("second scan: X-Cache %q Age %q same body %v", resp.Header.Get("X-Cache"), resp.Header.Get("Age"), bytes.Equal(first, second))
	}
	if len(s.Hits()) != hits {
		t.Errorf("a cached scan touched the site (%d new requests)", len(s.Hits())-hits)
	}
	resp, _ = get(t, scanURL(o, s.URL, "&format=json&fresh=1"))
	if resp.Header.Get("X-Cache") != "MISS" || len(s.Hits()) == hits {
		t.Error("fresh=1 must scan again")
	}
	if resp, b := get(t, scanURL(o, s.URL, "&format=xml")); resp.StatusCode != 400 || envelope(t, b).Code != "unsupported_format" {
		t.Errorf("format=xml: %d %s", resp.StatusCode, b)
	}
}

// readStream reads a whole SSE response.
func readStream(t *testing.T, u string) []sse.Event {
	t.Helper()
	resp, err := edgetest.LoadContract(t).Client(t).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var evs []sse.Event
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
}

func checkSequence(t *testing.T, evs []sse.Event, wantCached bool) (completed string) {
	t.Helper()
	var nonBeat []sse.Event
	for _, e := range evs {
		if e.Name != origin.EventHeartbeat {
			nonBeat = append(nonBeat, e)
		}
	}
	// started + 48 checks + 13 read checks + 5 identity and commerce
	// signals + completed
	nRead := len(checks.Read())
	if len(nonBeat) != 55+nRead {
		t.Fatalf("%d events (without heartbeats), want started + 48 checks + %d read checks + 5 signals + completed", len(nonBeat), nRead)
	}
	var st origin.StartedData
	if nonBeat[0].Name != origin.EventStarted || json.Unmarshal([]byte(nonBeat[0].Data), &st) != nil || len(st.Checks) != 48 || st.Cached != wantCached {
		t.Fatalf("first event %s %s", nonBeat[0].Name, nonBeat[0].Data[:80])
	}
	seen := map[string]bool{}
	var signals []report.Signal
	var read []report.Check
	for i, e := range nonBeat {
		if e.ID != fmt.Sprint(i+1) || e.Retry != 3000 {
			t.Errorf("event %d: id %q retry %d", i, e.ID, e.Retry)
		}
		switch {
		case i >= 1 && i <= 48:
			var c report.Check
			if e.Name != origin.EventCheck || json.Unmarshal([]byte(e.Data), &c) != nil || c.ID == "" || c.Status == "" {
				t.Fatalf("event %d: %s %s", i, e.Name, e.Data)
			}
			seen[c.ID] = true
		case i >= 49 && i < 49+nRead:
			var c report.Check
			if e.Name != origin.EventReadCheck || json.Unmarshal([]byte(e.Data), &c) != nil || !strings.HasPrefix(c.ID, "R.") || c.Status == "" {
				t.Fatalf("event %d: %s %s", i, e.Name, e.Data)
			}
			read = append(read, c)
		case i >= 49+nRead && i < 54+nRead:
			var sg report.Signal
			if e.Name != origin.EventSignal || json.Unmarshal([]byte(e.Data), &sg) != nil || sg.ID == "" || sg.Group == "" {
				t.Fatalf("event %d: %s %s", i, e.Name, e.Data)
			}
			signals = append(signals, sg)
		}
	}
	if len(seen) != 48 {
		t.Errorf("%d distinct checks streamed", len(seen))
	}
	last := nonBeat[len(nonBeat)-1]
	if last.Name != origin.EventCompleted {
		t.Fatalf("last event %s", last.Name)
	}
	var final report.Result
	if err := json.Unmarshal([]byte(last.Data), &final); err != nil || !reflect.DeepEqual(final.Signals, signals) {
		t.Errorf("signal events %+v differ from the report's signals %+v (%v)", signals, final.Signals, err)
	}
	// The read checks streamed are the completed report's, in order, and
	// the completed report carries the profile and the read suite whole.
	if final.Read == nil || !reflect.DeepEqual(final.Read.Checks, read) {
		t.Errorf("read_check events %+v differ from the report's read checks", read)
	}
	if final.Profile == nil || final.Profile.ID == "" || final.Profile.Source == "" {
		t.Errorf("scan.completed carries no profile: %+v", final.Profile)
	}
	return last.Data
}

func TestSSEStream(t *testing.T) {
	o := startOrigin(t, origin.Config{Heartbeat: 20 * time.Millisecond}, nil)
	s := site(t, "peer", fixture.WithDelay(150*time.Millisecond))
	evs := readStream(t, scanURL(o, s.URL, ""))
	completed := checkSequence(t, evs, false)
	beats := 0
	for _, e := range evs {
		if e.Name == origin.EventHeartbeat {
			beats++
			if e.ID != "" && e.Data == "" {
				t.Error("heartbeat without data")
			}
		}
	}
	if beats == 0 {
		t.Error("no heartbeat during a scan of several hundred milliseconds")
	}
	_, jsonBody := get(t, scanURL(o, s.URL, "&format=json"))
	if completed != string(jsonBody) {
		t.Error("scan.completed differs from the JSON scan of the same URL")
	}
	// The cached result replays the same sequence, so a UI has one code path.
	if again := checkSequence(t, readStream(t, scanURL(o, s.URL, "")), true); again != completed {
		t.Error("the cached stream's final event differs")
	}
}

func TestSSEErrorEvent(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	evs := readStream(t, scanURL(o, dead, ""))
	last := evs[len(evs)-1]
	if last.Name != origin.EventError || envelope(t, []byte(last.Data)).Code != "site_unreachable" {
		t.Fatalf("last event %s %s", last.Name, last.Data)
	}
	resp, b := get(t, scanURL(o, dead, "&format=json"))
	if resp.StatusCode != 422 || envelope(t, b).Code != "site_unreachable" {
		t.Errorf("JSON: %d %s", resp.StatusCode, b)
	}
}

func TestInvalidURLs(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	// The hosted configuration refuses private IP literals up front.
	st := embedded(t)
	hosted := origin.New(origin.Config{}, st, engine.New(engine.Options{}))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go hosted.Serve(ln)
	defer hosted.Shutdown(context.Background())
	hostedURL := "http://" + ln.Addr().String()
	cases := []struct {
		in, code string
	}{
		{"", "missing_url"},
		{"   ", "missing_url"},
		{"javascript:alert(1)", "invalid_url"},
		{"file:///etc/passwd", "invalid_url"},
		{"ftp://example.com/", "invalid_url"},
		{"data:text/html,hi", "invalid_url"},
		{"http://169.254.169.254/", "invalid_url"},
		{"http://[::1]/", "invalid_url"},
		{"http://127.0.0.1:8080/", "invalid_url"},
		{"http://10.0.0.1/", "invalid_url"},
		{"http://[::ffff:127.0.0.1]/", "invalid_url"},
		{"http://0x7f.1/", "invalid_url"},
		{"http://2130706433/", "invalid_url"},
		{"http://" + strings.Repeat("a", 3000) + ".com/", "invalid_url"},
		{"http://exa mple.com/", "invalid_url"},
		{"http://☃.☃..com/", "invalid_url"},
		{"http://user:pass@example.com/", "invalid_url"},
		{"intranet", "invalid_url"},
		{"http://example.com:99999/", "invalid_url"},
	}
	for _, c := range cases {
		resp, b := get(t, hostedURL+"/api/scan?format=json&url="+url.QueryEscape(c.in))
		if resp.StatusCode != 400 || string(envelope(t, b).Code) != c.code {
			t.Errorf("GET %q: %d %s", c.in, resp.StatusCode, b)
		}
		body, _ := json.Marshal(map[string]string{"url": c.in})
		resp, b = post(t, nil, hostedURL+"/api/scan", "application/json", string(body))
		if resp.StatusCode != 400 || string(envelope(t, b).Code) != c.code {
			t.Errorf("POST %q: %d %s", c.in, resp.StatusCode, b)
		}
	}
	if resp, b := get(t, o.URL+"/api/scan"); resp.StatusCode != 400 || envelope(t, b).Code != "missing_url" {
		t.Errorf("no url parameter: %d %s", resp.StatusCode, b)
	}
}

func TestPostErrors(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	cases := []struct {
		ctype, body string
		status      int
		code        string
	}{
		{"text/plain", `{"url":"example.com"}`, 415, "unsupported_media_type"},
		{"", `{"url":"example.com"}`, 415, "unsupported_media_type"},
		{"application/json", `{"url":`, 400, "invalid_json"},
		{"application/json", `{}`, 400, "missing_url"},
		{"application/json", `{"url": 42}`, 400, "invalid_json"},
		{"application/json", `{"url":"` + strings.Repeat("a", 70<<10) + `"}`, 413, "payload_too_large"},
	}
	for _, c := range cases {
		resp, b := post(t, nil, o.URL+"/api/scan", c.ctype, c.body)
		if resp.StatusCode != c.status || string(envelope(t, b).Code) != c.code {
			t.Errorf("%s %.30s: %d %s", c.ctype, c.body, resp.StatusCode, b)
		}
	}
	if resp, b := post(t, nil, o.URL+"/api/scan", "application/json", `{"url":"example.com"}`, "Idempotency-Key", "bad key with spaces"); resp.StatusCode != 400 || envelope(t, b).Code != "invalid_idempotency_key" {
		t.Errorf("bad key: %d %s", resp.StatusCode, b)
	}
}

func TestPostBriefAndIdempotency(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "peer")
	body := `{"url":"` + s.URL + `"}`
	resp, first := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "key-1")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, first)
	}
	var brief map[string]any
	json.Unmarshal(first, &brief)
	if len(brief) != 4 || brief["checks"] == nil || brief["levels"] != nil {
		t.Errorf("the POST body carries only url, timestamp, currentLevel, checks: %v", keys(brief))
	}
	var bc struct {
		Checks []map[string]any `json:"checks"`
	}
	json.Unmarshal(first, &bc)
	if len(bc.Checks) != 48 || len(bc.Checks[0]) != 6 {
		t.Errorf("brief checks carry id, name, passed, status, level, message: %v", bc.Checks[0])
	}
	resp, replay := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "key-1")
	if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first, replay) {
		t.Errorf("replay: %d %q identical=%v", resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), bytes.Equal(first, replay))
	}
	resp, b := post(t, nil, o.URL+"/api/scan", "application/json", `{"url":"`+s.URL+`/other"}`, "Idempotency-Key", "key-1")
	if resp.StatusCode != 422 || envelope(t, b).Code != "idempotency_key_reused" {
		t.Errorf("same key, other body: %d %s", resp.StatusCode, b)
	}
	// Keys are scoped to the caller: another client address may use the same key.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	resp, b = post(t, other, o.URL+"/api/scan", "application/json", `{"url":"`+s.URL+`/other"}`, "Idempotency-Key", "key-1")
	if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("another caller, same key: %d %s", resp.StatusCode, b)
	}
}

// Only outcomes are kept for an Idempotency-Key: a refusal (here a site
// that does not answer) is not replayed, and the same key then carries the
// corrected request.
func TestIdempotencyKeepsOnlyOutcomes(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there now
	for i := range 2 {
		resp, b := post(t, nil, o.URL+"/api/scan", "application/json", `{"url":"`+deadURL+`"}`, "Idempotency-Key", "refused-1")
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("refusal %d: %d replayed=%q %s", i, resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), b)
		}
	}
	s := site(t, "peer")
	resp, b := post(t, nil, o.URL+"/api/scan", "application/json", `{"url":"`+s.URL+`"}`, "Idempotency-Key", "refused-1")
	if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the key of a refusal, with the corrected request: %d %s", resp.StatusCode, b)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestIdempotencyRace(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "peer", fixture.WithDelay(200*time.Millisecond))
	body := `{"url":"` + s.URL + `"}`
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, b := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "race")
			codes[i] = resp.StatusCode
			if resp.StatusCode == 409 && (envelope(t, b).Code != "idempotency_in_flight" || resp.Header.Get("Retry-After") == "") {
				t.Errorf("409 body %s", b)
			}
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
		t.Errorf("racing requests with one key: %v, want one 200 and one 409", codes)
	}
}

// scrape reads the metrics as a scraper on AGENTREADY_METRICS_ADDR does.
func scrape(t *testing.T, o *testOrigin) string {
	t.Helper()
	w := httptest.NewRecorder()
	o.srv.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	return w.Body.String()
}

func metricValue(t *testing.T, o *testOrigin, name string) string {
	b := scrape(t, o)
	for _, l := range strings.Split(b, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}

// A client that goes away cancels the scan's remaining work: the worker is
// released well before the scan could have finished, and nothing is cached.
//
// The site answers nothing for ten minutes, and the scan's requests and
// deadline are a minute long, so a scan that is not canceled holds its
// worker for at least a minute: released within half of that, it was the
// cancellation that released it, however slowly this machine runs.
func TestClientDisconnectCancelsScan(t *testing.T) {
	const hold = time.Minute
	sc := engine.New(engine.Options{Deadline: hold, Fetch: fetch.Config{RequestTimeout: hold, Policy: loopback.Policy()}})
	o := serveOrigin(t, origin.Config{Heartbeat: 10 * time.Millisecond, AllowPrivate: true}, embedded(t), sc)
	s := site(t, "peer", fixture.WithDelay(10*time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", scanURL(o, s.URL, ""), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := sse.NewReader(resp.Body).Next(); err != nil || e.Name != origin.EventStarted {
		t.Fatalf("first event %v %v", e, err)
	}
	if metricValue(t, o, "agentready_scans_running") != "1" {
		t.Fatal("the scan is not running")
	}
	cancel()
	resp.Body.Close()
	testenv.Eventually(t, hold/2, "the worker to be released (an uncanceled scan holds it "+hold.String()+")", func() bool {
		return metricValue(t, o, "agentready_scans_running") == "0"
	})
	if _, _, err := o.store.ScanCache().Get(context.Background(), s.URL+"/"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a canceled scan was cached: %v", err)
	}
}

// With the one worker busy and the one queue slot taken, a third scan is
// answered 503 at once. The busy scans wait on sites that answer nothing
// until the test closes them (their requests and deadline are a minute
// long), so the worker and the slot stay taken however slowly this runs.
func TestOverloadedAnswers503(t *testing.T) {
	sc := engine.New(engine.Options{Deadline: time.Minute, Fetch: fetch.Config{RequestTimeout: time.Minute, Policy: loopback.Policy()}})
	o := serveOrigin(t, origin.Config{Workers: 1, Queue: 1, AllowPrivate: true}, embedded(t), sc)
	var wg sync.WaitGroup
	var slow []*fixture.Site
	for i := 0; i < 2; i++ {
		s := site(t, "peer", fixture.WithDelay(10*time.Minute))
		slow = append(slow, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, scanURL(o, s.URL, "&format=json"))
		}()
	}
	testenv.Eventually(t, 30*time.Second, "one scan running and one queued", func() bool {
		return metricValue(t, o, "agentready_scans_running") == "1" && metricValue(t, o, "agentready_scan_queue_depth") == "1"
	})
	other := site(t, "empty")
	resp, b := get(t, scanURL(o, other.URL, "&format=json"))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || envelope(t, b).Code != "overloaded" {
		t.Errorf("third scan: %d %s", resp.StatusCode, b)
	}
	for _, s := range slow {
		s.Close() // the busy scans end (site unreachable)
	}
	wg.Wait()
}

func TestRoutesAndOperations(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/badge?url=example.com", 421, "served_by_edge"},
		{"POST", "/api/agent/token", 421, "served_by_edge"},
		{"GET", "/.well-known/oauth-protected-resource", 421, "served_by_edge"},
		{"GET", "/api/monitors/mon_1", 404, "not_found"},
		{"POST", "/api/monitors/mon_1/test", 404, "not_found"},
		{"POST", "/api/v1/scan-gateway", 415, "unsupported_media_type"},
		{"GET", "/nope", 404, "not_found"},
		{"DELETE", "/api/scan", 405, "method_not_allowed"},
	} {
		req, _ := http.NewRequest(c.method, o.URL+c.path, nil)
		resp, err := edgetest.LoadContract(t).Client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(envelope(t, b).Code) != c.code {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, b)
		}
		if c.status == 405 && resp.Header.Get("Allow") != "GET, POST" {
			t.Errorf("Allow %q", resp.Header.Get("Allow"))
		}
	}
	resp, b := get(t, o.URL+"/healthz")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"status":"ok"`) {
		t.Errorf("healthz %d %s", resp.StatusCode, b)
	}
	s := site(t, "empty")
	get(t, scanURL(o, s.URL, "&format=json"))
	get(t, scanURL(o, s.URL, "&format=json"))
	if metricValue(t, o, "agentready_scan_cache_hits_total") != "1" || metricValue(t, o, "agentready_scan_duration_seconds_count") != "1" {
		t.Error("metrics do not count one miss and one hit")
	}
	if b := scrape(t, o); !strings.Contains(b, `agentready_http_requests_total{route="/api/scan",status="200"} 2`) {
		t.Errorf("request counter missing:\n%s", b)
	}
}

// In-flight scans finish during a graceful shutdown; new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	st := embedded(t)
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	srv := origin.New(origin.Config{AllowPrivate: true}, st, sc)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	s := site(t, "peer", fixture.WithDelay(250*time.Millisecond))
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(base + "/api/scan?format=json&url=" + url.QueryEscape(s.URL))
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	testenv.Eventually(t, 30*time.Second, "the scan to start", func() bool { return len(s.Hits()) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	if code := <-done; code != 200 {
		t.Errorf("in-flight scan ended with %d during shutdown", code)
	}
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("new connections are still accepted after shutdown")
	}
}

// The same API behaviour holds with the shared Redis backend.
func TestWithRedisBackend(t *testing.T) {
	u := testenv.RedisURL(t)
	r, err := store.OpenRedis(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := r.WithPrefix(fmt.Sprintf("agentready-test:origin:%d:", time.Now().UnixNano()))
	o := startOrigin(t, origin.Config{}, st)
	s := site(t, "peer")
	body := `{"url":"` + s.URL + `"}`
	_, first := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "redis-key")
	resp, replay := post(t, nil, o.URL+"/api/scan", "application/json", body, "Idempotency-Key", "redis-key")
	if resp.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first, replay) {
		t.Error("replay through Redis")
	}
	if resp, _ := get(t, scanURL(o, s.URL, "&format=json")); resp.Header.Get("X-Cache") != "HIT" {
		t.Error("scan cache through Redis")
	}
}

// Scan-costing actions are written to the audit log with the acting caller.
func TestAuditLog(t *testing.T) {
	var buf syncBuffer
	o := startOrigin(t, origin.Config{Audit: slog.New(slog.NewJSONHandler(&buf, nil))}, nil)
	s := site(t, "empty")
	get(t, scanURL(o, s.URL, "&format=json"))
	cs := connect(t, o, "")
	call(t, cs, "scan_url", map[string]any{"url": s.URL})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d audit lines: %s", len(lines), buf.String())
	}
	for i, want := range []string{`"action":"scan"`, `"action":"mcp.scan_url"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"client_id":"anonymous:127.0.0.1"`) || !strings.Contains(lines[i], `"actor_type":"anonymous"`) {
			t.Errorf("line %d: %s", i, lines[i])
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The counters are the operator's: the public listener (and so an edge in
// front of it) answers /metrics like any unknown path, signed or not, and
// MetricsHandler, for a listener of its own, serves the Prometheus text.
func TestMetricsNotOnThePublicListener(t *testing.T) {
	for _, edgeOnly := range []bool{false, true} {
		o := startOrigin(t, origin.Config{EdgeOnly: edgeOnly}, nil)
		get(t, o.URL+"/healthz")
		resp, b := get(t, o.URL+"/metrics")
		if resp.StatusCode < 400 || strings.Contains(string(b), "agentready_http_requests_total") {
			t.Errorf("EdgeOnly %v: the public listener answers /metrics %d: %.200s", edgeOnly, resp.StatusCode, b)
		}
		if m := scrape(t, o); !strings.Contains(m, `agentready_http_requests_total{route="/healthz",status="200"} 1`) {
			t.Errorf("EdgeOnly %v: MetricsHandler does not count the health check:\n%s", edgeOnly, m)
		}
	}
	o := startOrigin(t, origin.Config{}, nil)
	for _, tc := range []struct {
		method, path string
		code         int
	}{{"POST", "/metrics", 405}, {"GET", "/", 404}, {"GET", "/api/scan", 404}} {
		w := httptest.NewRecorder()
		o.srv.MetricsHandler().ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.code || strings.Contains(w.Body.String(), "agentready_") {
			t.Errorf("metrics listener, %s %s: %d (want %d) %.100s", tc.method, tc.path, w.Code, tc.code, w.Body.String())
		}
	}
}

// Refusals never echo the request (docs/api.md, "Request limits"): not the
// path of an unknown endpoint, the method refused, the path of an endpoint
// the edge serves, nor the url to scan, which they call "the url" or "its
// host" instead.
func TestErrorsDoNotEchoTheRequest(t *testing.T) {
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: fetch.AddressPolicy{}}})
	o := serveOrigin(t, origin.Config{}, embedded(t), sc)
	for _, tc := range []struct {
		method, target, code string
		echo                 []string
	}{
		{"GET", "/zz-echo-7f3a", "not_found", []string{"zz-echo-7f3a"}},
		{"GET", "/api/zz-echo-7f3a?x=1", "not_found", []string{"zz-echo-7f3a"}},
		{"PATCH", "/api/report?url=example.com", "method_not_allowed", []string{"PATCH", "/api/report"}},
		{"GET", "/.well-known/oauth-protected-resource", "served_by_edge", []string{"oauth-protected-resource"}},
		{"GET", "/api/scan?format=json&url=" + url.QueryEscape("http://10.77.1.2:8080/"), "invalid_url", []string{"10.77.1.2"}},
	} {
		req, _ := http.NewRequest(tc.method, o.URL+tc.target, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if e := envelope(t, b); string(e.Code) != tc.code {
			t.Errorf("%s %s: %d %s, want %s", tc.method, tc.target, resp.StatusCode, e.Code, tc.code)
		}
		for _, w := range tc.echo {
			if strings.Contains(string(b), w) {
				t.Errorf("%s %s: the answer echoes %q: %s", tc.method, tc.target, w, b)
			}
		}
	}
}
