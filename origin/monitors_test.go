package origin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/webhook"
)

// received is one delivery as a receiver saw it.
type received struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
	event  webhook.Event
	status int // what the receiver answered
}

// receiver is a webhook endpoint on loopback that records every delivery
// and answers what answer says (200 when it says 0).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(path string, ev webhook.Event, seen int) int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev webhook.Event
		_ = json.Unmarshal(body, &ev)
		r.mu.Lock()
		seen := 0
		for _, g := range r.got {
			if g.event.ID == ev.ID {
				seen++
			}
		}
		status := 200
		if r.answer != nil {
			if s := r.answer(req.URL.Path, ev, seen); s != 0 {
				status = s
			}
		}
		r.got = append(r.got, received{path: req.URL.Path, header: req.Header.Clone(), body: body, at: time.Now(), event: ev, status: status})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) setAnswer(f func(path string, ev webhook.Event, seen int) int) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

// find returns the deliveries to path that match.
func (r *receiver) find(path string, match func(received) bool) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.path == path && (match == nil || match(g)) {
			out = append(out, g)
		}
	}
	return out
}

// togglingSite is a site whose agent readiness improves when better is set:
// it then publishes llms.txt and robots.txt.
func togglingSite(t *testing.T) (url string, better *atomic.Bool) {
	better = &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!doctype html><html lang="en"><head><title>Toggle</title><meta name="description" content="A site that gets better."></head><body><main><h1>Toggle</h1><p>Hello.</p></main></body></html>`)
		case better.Load() && r.URL.Path == "/llms.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "# Toggle\n\n> A site that gets better.\n\n## Docs\n\n- [Home](/): the home page\n")
		case better.Load() && r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nAllow: /\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, better
}

func fastMonitors() monitor.Config {
	return monitor.Config{MinCadence: 200 * time.Millisecond, Poll: 20 * time.Millisecond, Retries: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
		Jitter: -1, Timeout: 2 * time.Second, MaxFailures: 50}
}

func createMonitor(t *testing.T, o *testOrigin, body string, hdr ...string) (int, map[string]any, http.Header) {
	t.Helper()
	resp, b := post(t, nil, o.URL+"/api/monitors", "application/json", body, hdr...)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, resp.Header
}

// A monitor end to end on one origin: the first run sets the baseline
// (scan.completed, no score.changed), a change of the site sends
// score.changed with the previous score, every delivery verifies with our
// package and with the official Standard Webhooks library, report_url
// answers the report the event describes, a failed attempt is retried with
// the same webhook-id, a test delivery reports the receiver's answer, 410
// disables the monitor, and DELETE stops everything.
func TestMonitorEndToEnd(t *testing.T) {
	o := startOrigin(t, origin.Config{Monitors: fastMonitors()}, nil)
	siteURL, better := togglingSite(t)
	recv := newReceiver(t)

	status, m, hdr := createMonitor(t, o, `{"url":"`+siteURL+`","callback_url":"`+recv.srv.URL+`/a","cadence":"300ms"}`, "Idempotency-Key", "create-a")
	if status != 201 || hdr.Get("Location") != o.URL+"/api/monitors/"+m["id"].(string) {
		t.Fatalf("create: %d %v Location %q", status, m, hdr.Get("Location"))
	}
	id, secret := m["id"].(string), m["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || m["status"] != "active" || m["cadence"] != "300ms" {
		t.Errorf("created record: %v", m)
	}
	// The same key and body: the same monitor, not a second one.
	status, again, hdr := createMonitor(t, o, `{"url":"`+siteURL+`","callback_url":"`+recv.srv.URL+`/a","cadence":"300ms"}`, "Idempotency-Key", "create-a")
	if status != 201 || again["id"] != id || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed create: %d %v", status, again)
	}
	resp, b := get(t, o.URL+"/api/monitors/"+id)
	if resp.StatusCode != 200 || strings.Contains(string(b), secret) || strings.Contains(string(b), `"secret"`) {
		t.Errorf("GET shows the secret or fails: %d %s", resp.StatusCode, b)
	}

	completed := func(r received) bool { return r.event.Type == webhook.EventScanCompleted && !r.event.Test }
	testenv.Eventually(t, 15*time.Second, "the first scan.completed", func() bool { return len(recv.find("/a", completed)) >= 1 })
	first := recv.find("/a", completed)[0]
	if first.event.MonitorID != id || first.event.Data.Previous != nil || first.event.Data.URL != siteURL+"/" || first.event.Data.ScheduledFor.IsZero() {
		t.Errorf("first event: %+v", first.event)
	}
	if err := webhook.Verify(secret, first.header, first.body, first.at); err != nil {
		t.Errorf("our verifier refuses a real delivery: %v", err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(first.body, first.header); err != nil {
		t.Errorf("the official Standard Webhooks library refuses a real delivery: %v", err)
	}
	if first.header.Get("webhook-id") != first.event.ID || first.header.Get(webhook.HeaderEvent) != webhook.EventScanCompleted {
		t.Errorf("headers: %v", first.header)
	}
	if err := webhook.Verify(secret, first.header, append([]byte(" "), first.body...), first.at); err == nil {
		t.Error("a tampered body verifies")
	}
	resp, b = get(t, first.event.Data.ReportURL)
	var rep struct {
		URL   string `json:"url"`
		Score struct {
			Value int `json:"value"`
		} `json:"score"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil || rep.Score.Value != first.event.Data.Score || rep.URL != first.event.Data.URL {
		t.Errorf("report_url %s: %d, score %d, event says %d", first.event.Data.ReportURL, resp.StatusCode, rep.Score.Value, first.event.Data.Score)
	}
	if n := len(recv.find("/a", func(r received) bool { return r.event.Type == webhook.EventScoreChanged })); n != 0 {
		t.Errorf("%d score.changed before the site changed (the first run only sets the baseline)", n)
	}

	better.Store(true)
	changed := func(r received) bool { return r.event.Type == webhook.EventScoreChanged }
	testenv.Eventually(t, 15*time.Second, "score.changed after the site improved", func() bool { return len(recv.find("/a", changed)) >= 1 })
	ch := recv.find("/a", changed)[0]
	if ch.event.Data.Previous == nil || ch.event.Data.Previous.Score != first.event.Data.Score || ch.event.Data.Score <= first.event.Data.Score {
		t.Errorf("score.changed: %+v (first score %d)", ch.event.Data, first.event.Data.Score)
	}
	n := len(recv.find("/a", completed))
	testenv.Eventually(t, 15*time.Second, "two more runs after the change", func() bool { return len(recv.find("/a", completed)) >= n+2 })
	if n := len(recv.find("/a", changed)); n != 1 {
		t.Errorf("%d score.changed for one change", n)
	}

	// The next delivery fails once: it comes again with the same webhook-id.
	var failedID atomic.Value
	recv.setAnswer(func(path string, ev webhook.Event, seen int) int {
		if path != "/a" || ev.Test {
			return 0
		}
		if failedID.Load() == nil {
			failedID.Store(ev.ID)
		}
		if failedID.Load() == ev.ID && seen == 0 {
			return 503
		}
		return 0
	})
	testenv.Eventually(t, 15*time.Second, "the retry of a failed delivery", func() bool {
		id, _ := failedID.Load().(string)
		return id != "" && len(recv.find("/a", func(r received) bool { return r.event.ID == id })) >= 2
	})
	retried := recv.find("/a", func(r received) bool { return r.event.ID == failedID.Load() })
	if retried[0].status != 503 || retried[1].status != 200 || retried[0].header.Get("webhook-id") != retried[1].header.Get("webhook-id") {
		t.Errorf("retry: statuses %d, %d; ids %q, %q", retried[0].status, retried[1].status, retried[0].header.Get("webhook-id"), retried[1].header.Get("webhook-id"))
	}
	testenv.Eventually(t, 15*time.Second, "the delivery list shows the retried delivery delivered", func() bool {
		_, b := get(t, o.URL+"/api/monitors/"+id+"/deliveries?limit=100")
		var list struct {
			Deliveries []struct {
				ID       string `json:"id"`
				Status   string `json:"status"`
				Attempts int    `json:"attempts"`
			} `json:"deliveries"`
		}
		_ = json.Unmarshal(b, &list)
		for _, d := range list.Deliveries {
			if d.ID == failedID.Load() {
				return d.Status == "delivered" && d.Attempts == 2
			}
		}
		return false
	})

	// A redelivery sends the same event again, with the same webhook-id and a fresh signature.
	before := len(recv.find("/a", func(r received) bool { return r.event.ID == first.event.ID }))
	resp, b = post(t, nil, o.URL+"/api/monitors/"+id+"/deliveries/"+first.event.ID+"/redeliver", "", "")
	if resp.StatusCode != 202 || !strings.Contains(string(b), first.event.ID) {
		t.Errorf("redeliver: %d %s", resp.StatusCode, b)
	}
	testenv.Eventually(t, 15*time.Second, "the redelivery", func() bool {
		return len(recv.find("/a", func(r received) bool { return r.event.ID == first.event.ID })) > before
	})
	sent := recv.find("/a", func(r received) bool { return r.event.ID == first.event.ID })
	redelivered := sent[len(sent)-1]
	if string(redelivered.body) != string(first.body) || redelivered.header.Get("webhook-id") != first.event.ID || webhook.Verify(secret, redelivered.header, redelivered.body, redelivered.at) != nil {
		t.Errorf("the redelivery differs from the event or does not verify: %s", redelivered.body)
	}
	if resp, b := post(t, nil, o.URL+"/api/monitors/"+id+"/deliveries/evt_nope/redeliver", "", ""); resp.StatusCode != 404 {
		t.Errorf("redelivering an unknown delivery: %d %s", resp.StatusCode, b)
	}

	// A test delivery answers with what the receiver said.
	recv.setAnswer(func(path string, ev webhook.Event, seen int) int {
		if ev.Test {
			return 418
		}
		return 0
	})
	resp, b = post(t, nil, o.URL+"/api/monitors/"+id+"/test", "", "")
	var tr monitor.TestResult
	if resp.StatusCode != 200 || json.Unmarshal(b, &tr) != nil || tr.Delivered || tr.StatusCode != 418 || tr.DeliveryID == "" {
		t.Errorf("test delivery: %d %s", resp.StatusCode, b)
	}
	if sample := recv.find("/a", func(r received) bool { return r.event.ID == tr.DeliveryID }); len(sample) != 1 || !sample[0].event.Test || webhook.Verify(secret, sample[0].header, sample[0].body, sample[0].at) != nil {
		t.Errorf("the sample as received: %+v", sample)
	}

	// 410 Gone disables the monitor at once.
	recv.setAnswer(func(path string, ev webhook.Event, seen int) int { return 410 })
	testenv.Eventually(t, 15*time.Second, "410 disables the monitor", func() bool {
		_, b := get(t, o.URL+"/api/monitors/"+id)
		return strings.Contains(string(b), `"status":"disabled"`) && strings.Contains(string(b), "410")
	})
	_, b = get(t, o.URL+"/api/monitors/"+id)
	if strings.Contains(string(b), `"next_run":"`) {
		t.Errorf("a disabled monitor still has a next run: %s", b)
	}
	recv.setAnswer(nil)

	// The delivery list pages with an opaque cursor, filters and selects fields.
	type page struct {
		Deliveries []map[string]any `json:"deliveries"`
		Next       *string          `json:"next_cursor"`
	}
	var p1, p2, filtered page
	_, b = get(t, o.URL+"/api/monitors/"+id+"/deliveries?limit=2&fields=status,type")
	if json.Unmarshal(b, &p1) != nil || len(p1.Deliveries) != 2 || p1.Next == nil || len(p1.Deliveries[0]) != 3 || p1.Deliveries[0]["status"] == nil {
		t.Fatalf("first page: %s", b)
	}
	_, b = get(t, o.URL+"/api/monitors/"+id+"/deliveries?limit=2&cursor="+*p1.Next)
	if json.Unmarshal(b, &p2) != nil || len(p2.Deliveries) == 0 || p2.Deliveries[0]["id"] == p1.Deliveries[0]["id"] || p2.Deliveries[0]["id"] == p1.Deliveries[1]["id"] {
		t.Errorf("second page repeats the first: %s", b)
	}
	_, b = get(t, o.URL+"/api/monitors/"+id+"/deliveries?limit=100&filter[type]=score.changed")
	if json.Unmarshal(b, &filtered) != nil || len(filtered.Deliveries) != 1 || filtered.Deliveries[0]["type"] != "score.changed" || filtered.Next != nil {
		t.Errorf("filter[type]=score.changed: %s", b)
	}
	for _, q := range []string{"cursor=nope", "fields=secret", "filter[status]=lost", "limit=0"} {
		if resp, b := get(t, o.URL+"/api/monitors/"+id+"/deliveries?"+q); resp.StatusCode != 400 || envelope(t, b).Code != "bad_request" {
			t.Errorf("?%s: %d %s", q, resp.StatusCode, b)
		}
	}

	// DELETE: gone for every caller, and nothing more is delivered.
	status, c, _ := createMonitor(t, o, `{"url":"`+siteURL+`","callback_url":"`+recv.srv.URL+`/c","cadence":"300ms"}`)
	status2, ctrl, _ := createMonitor(t, o, `{"url":"`+siteURL+`","callback_url":"`+recv.srv.URL+`/control","cadence":"300ms","events":["scan.completed"]}`)
	if status != 201 || status2 != 201 {
		t.Fatalf("creates: %d %d", status, status2)
	}
	testenv.Eventually(t, 15*time.Second, "a delivery of the monitor to delete", func() bool { return len(recv.find("/c", nil)) >= 1 })
	req, _ := http.NewRequest("DELETE", o.URL+"/api/monitors/"+c["id"].(string), nil)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil || dresp.StatusCode != 204 {
		t.Fatalf("delete: %v %v", dresp, err)
	}
	deletedAt := time.Now()
	if resp, _ := get(t, o.URL+"/api/monitors/"+c["id"].(string)); resp.StatusCode != 404 {
		t.Errorf("GET after DELETE: %d", resp.StatusCode)
	}
	base := len(recv.find("/control", nil))
	testenv.Eventually(t, 15*time.Second, "three more runs of the control monitor", func() bool { return len(recv.find("/control", nil)) >= base+3 })
	if late := recv.find("/c", func(r received) bool { return r.event.CreatedAt.After(deletedAt) }); len(late) != 0 {
		t.Errorf("%d events of a deleted monitor were created after DELETE returned", len(late))
	}
	_ = ctrl
}

// signedAs returns what the edge adds to c's request (method, path, body)
// signed with secret: the identity headers, as key, value pairs.
func signedAs(secret []byte) func(c identity.Caller, method, path, body string) []string {
	return func(c identity.Caller, method, path, body string) []string {
		var h []string
		for k, v := range identity.Sign(secret, c, "127.0.0.1", identity.Request{Method: method, Path: path, Body: []byte(body)}, time.Now()) {
			h = append(h, k, v)
		}
		return h
	}
}

// A monitor created with an API key (vouched for by the edge) is that
// caller's: anyone else gets 404 for it, never 403.
func TestMonitorBoundToCaller(t *testing.T) {
	secret := []byte("edge-secret-for-the-monitor-test-01")
	o := startOrigin(t, origin.Config{EdgeSecret: secret, Monitors: fastMonitors()}, nil)
	recv := newReceiver(t)
	as := signedAs(secret)
	acme := identity.Caller{Tier: identity.APIKey, Subject: "acme"}
	other := identity.Caller{Tier: identity.APIKey, Subject: "globex"}
	create := `{"url":"example.com","callback_url":"` + recv.srv.URL + `/k","cadence":"1h"}`
	status, m, _ := createMonitor(t, o, create, as(acme, "POST", "/api/monitors", create)...)
	if status != 201 || m["bound_to_caller"] != true {
		t.Fatalf("create with a key: %d %v", status, m)
	}
	path := "/api/monitors/" + m["id"].(string)
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"its key", as(acme, "GET", path, ""), 200},
		{"another key", as(other, "GET", path, ""), 404},
		{"no credentials", nil, 404},
	} {
		if resp, b := get(t, o.URL+path, c.hdr...); resp.StatusCode != c.status {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
}

// GET /api/monitors lists what the caller's key or token created, oldest
// first, and nothing of anyone else's; a caller without credentials is
// told why it cannot list (its monitors are bound to nobody), and a
// deleted monitor leaves the list.
func TestListMonitors(t *testing.T) {
	secret := []byte("edge-secret-for-the-monitor-test-01")
	o := startOrigin(t, origin.Config{EdgeSecret: secret, Monitors: fastMonitors()}, nil)
	recv := newReceiver(t)
	as := signedAs(secret)
	acme := identity.Caller{Tier: identity.APIKey, Subject: "acme"}
	globex := identity.Caller{Tier: identity.APIKey, Subject: "globex"}
	created := map[string]int64{} // id → creation second, as the monitor says
	create := func(c identity.Caller, path string) string {
		t.Helper()
		body := `{"url":"example.com","callback_url":"` + recv.srv.URL + path + `","cadence":"1h"}`
		status, m, _ := createMonitor(t, o, body, as(c, "POST", "/api/monitors", body)...)
		if status != 201 {
			t.Fatalf("create: %d %v", status, m)
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["created_at"]))
		if err != nil {
			t.Fatalf("created_at %v: %v", m["created_at"], err)
		}
		id := m["id"].(string)
		created[id] = at.Unix()
		return id
	}
	list := func(hdr []string) (int, []string, string) {
		t.Helper()
		resp, b := get(t, o.URL+"/api/monitors", hdr...)
		var out struct {
			Monitors []struct {
				ID     string `json:"id"`
				Secret string `json:"secret"`
			} `json:"monitors"`
			Code string `json:"code"`
		}
		json.Unmarshal(b, &out)
		var ids []string
		for _, m := range out.Monitors {
			if m.Secret != "" {
				t.Errorf("the list shows a monitor's secret")
			}
			ids = append(ids, m.ID)
		}
		return resp.StatusCode, ids, out.Code
	}
	// Oldest first means by creation second, then by id: two monitors made
	// in one second are listed by id (the two may also fall on each side of
	// a second, as a run on a busy machine once found).
	first, second := create(acme, "/a1"), create(acme, "/a2")
	if created[second] < created[first] || created[second] == created[first] && second < first {
		first, second = second, first
	}
	theirs := create(globex, "/g1")
	if status, ids, _ := list(as(acme, "GET", "/api/monitors", "")); status != 200 || !slices.Equal(ids, []string{first, second}) {
		t.Errorf("acme's list: %d %v, want [%s %s]", status, ids, first, second)
	}
	if status, ids, _ := list(as(globex, "GET", "/api/monitors", "")); status != 200 || !slices.Equal(ids, []string{theirs}) {
		t.Errorf("globex's list: %d %v, want [%s]", status, ids, theirs)
	}
	if status, ids, code := list(nil); status != 401 || code != "credentials_required" || len(ids) != 0 {
		t.Errorf("without credentials: %d %s %v", status, code, ids)
	}
	del := "/api/monitors/" + first
	req, _ := http.NewRequest("DELETE", o.URL+del, nil)
	for h, kv := 0, as(acme, "DELETE", del, ""); h < len(kv); h += 2 {
		req.Header.Set(kv[h], kv[h+1])
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete: %v %v", resp, err)
	}
	if status, ids, _ := list(as(acme, "GET", "/api/monitors", "")); status != 200 || !slices.Equal(ids, []string{second}) {
		t.Errorf("acme's list after a delete: %d %v, want [%s]", status, ids, second)
	}
}

func TestMonitorRequestErrors(t *testing.T) {
	cfg := fastMonitors()
	cfg.MinCadence = time.Minute
	o := startOrigin(t, origin.Config{Monitors: cfg}, nil)
	for _, c := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"not JSON", "text/plain", `{}`, 415, "unsupported_media_type"},
		{"bad JSON", "application/json", `{"url":`, 400, "invalid_json"},
		{"no url", "application/json", `{"callback_url":"https://h.example/"}`, 400, "missing_url"},
		{"no callback", "application/json", `{"url":"example.com"}`, 400, "invalid_callback_url"},
		{"short cadence", "application/json", `{"url":"example.com","callback_url":"https://h.example/","cadence":"30s"}`, 400, "cadence_too_short"},
		{"bad cadence", "application/json", `{"url":"example.com","callback_url":"https://h.example/","cadence":"often"}`, 400, "invalid_cadence"},
		{"bad events", "application/json", `{"url":"example.com","callback_url":"https://h.example/","events":["ping"]}`, 400, "invalid_events"},
	} {
		resp, b := post(t, nil, o.URL+"/api/monitors", c.ctype, c.body)
		if resp.StatusCode != c.status || string(envelope(t, b).Code) != c.code {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
	// ("/api/monitors/../etc" is no path of one spelling: 400 invalid_path, TestEdgeSignaturesCannotBeReplayed.)
	for _, p := range []string{"/api/monitors/mon_aaaaaaaaaaaaaaaaaaaaaaaaaa", "/api/monitors/mon_x/deliveries", "/api/monitors/mon_x/reports/rep_x"} {
		if resp, b := get(t, o.URL+p); resp.StatusCode != 404 || envelope(t, b).Code != "not_found" {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, b)
		}
	}
	recv := newReceiver(t) // a callback must resolve, now, to an address the server may reach
	for i := range 3 {
		status, _, _ := createMonitor(t, o, `{"url":"example.com","callback_url":"`+recv.srv.URL+`/`+string(rune('a'+i))+`"}`)
		if status != 201 {
			t.Fatalf("monitor %d: %d", i, status)
		}
	}
	resp, b := post(t, nil, o.URL+"/api/monitors", "application/json", `{"url":"example.com","callback_url":"`+recv.srv.URL+`/d"}`)
	if resp.StatusCode != 400 || envelope(t, b).Code != "too_many_monitors" || !strings.Contains(string(b), "3") {
		t.Errorf("a fourth anonymous monitor: %d %s", resp.StatusCode, b)
	}
}

// No answer of an idempotent endpoint carries what the caller sent in its
// headers: not the Idempotency-Key (first answer, replay, refusals), not any
// other header. Checked on POST /api/monitors and POST /api/scan, with a key
// and a header no answer could contain by chance.
func TestAnswersEchoNothingTheCallerSent(t *testing.T) {
	o := startOrigin(t, origin.Config{Monitors: fastMonitors()}, nil)
	recv := newReceiver(t)
	s := site(t, "peer")
	const key, probe = "echo-probe-key-7f3a9c", "echo-probe-header-41d2"
	monitor := `{"url":"example.com","callback_url":"` + recv.srv.URL + `/echo","cadence":"1h"}`
	scan := `{"url":"` + s.URL + `"}`
	for _, c := range []struct {
		name, path, body, key string
		status                int
	}{
		{"monitor created", "/api/monitors", monitor, key, 201},
		{"monitor replayed", "/api/monitors", monitor, key, 201},
		{"monitor, key reused with another body", "/api/monitors", strings.Replace(monitor, "1h", "2h", 1), key, 422},
		{"monitor refused", "/api/monitors", `{"url":"example.com","callback_url":"` + recv.srv.URL + `/echo","cadence":"often"}`, key + "-2", 400},
		{"monitor, malformed key", "/api/monitors", monitor, key + " with spaces", 400},
		{"scan", "/api/scan", scan, key + "-3", 200},
		{"scan replayed", "/api/scan", scan, key + "-3", 200},
		{"scan refused", "/api/scan", `{"url":"ftp://` + probe + `.example/"}`, key + "-4", 400},
	} {
		resp, b := post(t, nil, o.URL+c.path, "application/json", c.body, "Idempotency-Key", c.key, "X-Echo-Probe", probe)
		if resp.StatusCode != c.status {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, b)
		}
		for name, vs := range resp.Header {
			for _, v := range vs {
				if strings.Contains(v, key) || strings.Contains(v, probe) || strings.EqualFold(name, "Idempotency-Key") || strings.EqualFold(name, "X-Echo-Probe") {
					t.Errorf("%s: the answer carries %s: %s", c.name, name, v)
				}
			}
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s: the body carries the key: %s", c.name, b)
		}
		if strings.HasSuffix(c.name, "replayed") && resp.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: not a replay", c.name)
		}
	}
}

// At the origin, a token's minter comes from the token itself (reached
// directly) or from the identity the edge signed (behind it), and the
// monitors of one minter's tokens are held to the ceiling either way. An
// edge identity whose minter is not the token's is refused.
func TestMinterCeilingAtTheOrigin(t *testing.T) {
	keys, _ := token.ParseKeys("k1:0123456789abcdef0123456789abcdef")
	secret := []byte("edge-secret-for-the-minter-test-0001")
	cfg := fastMonitors()
	cfg.MinCadence, cfg.MaxPerTier, cfg.MaxPerMinter = time.Hour, map[identity.Tier]int{identity.Token: 2}, 3
	o := startOrigin(t, origin.Config{TokenKeys: keys, EdgeSecret: secret, Monitors: cfg}, nil)
	recv := newReceiver(t)
	body := `{"url":"example.com","callback_url":"` + recv.srv.URL + `/m","cadence":"1h"}`
	now := time.Now()
	tokenOf := func(sub, minter string) string {
		tok, _ := keys.Sign(token.Claims{Subject: sub, Scope: token.Scope, Audience: o.URL, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix(), Minter: minter})
		return tok
	}
	viaEdge := func(sub, minter string) []string {
		h := []string{"Authorization", "Bearer " + tokenOf(sub, minter)}
		signed := identity.Request{Method: "POST", Path: "/api/monitors", Body: []byte(body)}
		for k, v := range identity.Sign(secret, identity.Caller{Tier: identity.Token, Subject: sub, Minter: minter}, "127.0.0.1", signed, time.Now()) {
			h = append(h, k, v)
		}
		return h
	}
	created := 0
	for i, hdr := range [][]string{
		{"Authorization", "Bearer " + tokenOf("anon_a1", "m_a")}, {"Authorization", "Bearer " + tokenOf("anon_a1", "m_a")},
		viaEdge("anon_a2", "m_a"), viaEdge("anon_a2", "m_a"),
		{"Authorization", "Bearer " + tokenOf("anon_a3", "m_a")},
	} {
		status, m, _ := createMonitor(t, o, body, hdr...)
		switch {
		case status == 201:
			created++
		case status != 400 || !strings.Contains(m["message"].(string), "minted from this address"):
			t.Fatalf("monitor %d: %d %v", i, status, m)
		}
	}
	if created != 3 {
		t.Errorf("one minter's tokens hold %d monitors, want the ceiling of 3", created)
	}
	if status, m, _ := createMonitor(t, o, body, "Authorization", "Bearer "+tokenOf("anon_b1", "m_b")); status != 201 {
		t.Errorf("another minter's token: %d %v", status, m)
	}
	forged := viaEdge("anon_a2", "m_other")
	forged[1] = "Bearer " + tokenOf("anon_a2", "m_a")
	if status, m, _ := createMonitor(t, o, body, forged...); status != 401 || m["code"] != "invalid_identity" {
		t.Errorf("an edge identity with another minter than the token's: %d %v", status, m)
	}
}
