package workerd_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/badge"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/internal/testing/edgetest"
)

// gate is an origin that holds requests: it answers none of the held ones
// until want of them are in flight at once. A badge's score lookup is then
// answered whole; a scan is answered in two halves, the second only once
// the test has closed second (when every caller has its answer's headers),
// so that all the streamed answers are open in the isolate together.
type gate struct {
	want   int
	mu     sync.Mutex
	held   int
	all    chan struct{} // closed when want requests are held
	second chan struct{} // closed by the test
}

func newGate(want int) *gate {
	return &gate{want: want, all: make(chan struct{}), second: make(chan struct{})}
}

// badgeSite is the i-th badge's site, and badgeScore what the gate says it scored.
func badgeSite(i int) string              { return "https://badge-" + strconv.Itoa(i) + ".example/" }
func badgeScore(i int) (int, int, string) { return 40 + i, i % 4, "name" + strconv.Itoa(i) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller, _, _, ok := identity.Verify([]byte(edgeSecret), r.Header.Get, identity.Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}, time.Now())
	if !ok || r.URL.Path != "/api/scan" {
		http.Error(w, "not a signed scan", http.StatusForbidden)
		return
	}
	target := r.URL.Query().Get("url")
	if strings.HasSuffix(target, "/spend") { // spending before the round: answered at once
		io.WriteString(w, `{}`)
		return
	}
	g.mu.Lock()
	if g.held++; g.held == g.want {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
	case <-time.After(20 * time.Second):
		http.Error(w, "the other requests never arrived", http.StatusGatewayTimeout)
		return
	}
	if r.URL.Query().Get("format") == "json" { // the edge asking for a badge's score
		var i int
		fmt.Sscanf(target, "https://badge-%d.example/", &i)
		score, level, name := badgeScore(i)
		json.NewEncoder(w).Encode(map[string]any{"currentLevel": level, "score": map[string]any{"value": score, "levelName": name}})
		return
	}
	w.Header().Set("X-Echo-Url", target)
	fmt.Fprintf(w, `{"caller":%q,`, caller.Key())
	w.(http.Flusher).Flush()
	select {
	case <-g.second:
	case <-time.After(20 * time.Second):
		return // the client sees a truncated body
	}
	fmt.Fprintf(w, `"url":%q}`, target)
}

// Requests in flight together in one isolate's Go program — streamed scans
// of different callers and badge misses that each use a Redis socket, an
// origin fetch and the Cache API — each get their own answer, headers and
// allowance, and the isolate starts Go once for all of them.
func TestWorkerdInterleavedRequests(t *testing.T) {
	root, workerd, redisURL := requirements(t)
	type caller struct {
		header, value string // the credential
		key           string // identity.Caller.Key as the origin sees it
		limit, spend  int    // daily allowance; scans spent before the round
	}
	var callers []caller
	var keys []string
	for i := range 3 {
		secret := "ar_interleave_key_" + strconv.Itoa(i) + "_0123456789"
		sum := sha256.Sum256([]byte(secret))
		name := "key-" + strconv.Itoa(i)
		keys = append(keys, name+":"+hex.EncodeToString(sum[:]))
		callers = append(callers, caller{"X-API-Key", secret, identity.Caller{Tier: identity.APIKey, Subject: name}.Key(), 50, i})
	}
	for i, ip := range []string{"203.0.113.7", "203.0.113.8"} {
		callers = append(callers, caller{"CF-Connecting-IP", ip, identity.Caller{Tier: identity.Anonymous, Subject: ip}.Key(), 3, i + 1})
	}
	const badges = 5
	g := newGate(len(callers) + badges)
	origin := httptest.NewServer(g)
	t.Cleanup(origin.Close)
	env := edgetest.Env()
	env["AGENTREADY_API_KEYS"] = strings.Join(keys, ",")
	port := freePort(t)
	env = deployment(env, port, redisURL)
	env["ORIGIN_URL"] = origin.URL
	svc := startWorkerd(t, filepath.Join(root, "build", "worker"), workerd, env, port)

	scan := func(c caller, target string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, svc.base+"/api/scan?url="+target, nil)
		req.Header.Set(c.header, c.value)
		return http.DefaultClient.Do(req)
	}
	for i, c := range callers {
		for range c.spend {
			resp, err := scan(c, "https://scan-"+strconv.Itoa(i)+".example/spend")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("spending for %s: %v %v", c.key, resp, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}

	type answer struct {
		i      int
		resp   *http.Response
		body   []byte
		err    error
		badge  bool
		target string
	}
	answers := make(chan answer, len(callers)+badges)
	headers := make(chan struct{}, len(callers))
	for i, c := range callers {
		go func() {
			target := "https://scan-" + strconv.Itoa(i) + ".example/held"
			resp, err := scan(c, target)
			if err != nil {
				answers <- answer{i: i, err: err}
				headers <- struct{}{}
				return
			}
			headers <- struct{}{}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{i: i, resp: resp, body: body, err: err, target: target}
		}()
	}
	for i := range badges {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, svc.base+"/api/badge?url="+badgeSite(i), nil)
			req.Header.Set("CF-Connecting-IP", "198.51.100."+strconv.Itoa(i+1))
			resp, err := http.DefaultClient.Do(req)
			a := answer{i: i, badge: true, resp: resp, err: err}
			if err == nil {
				a.body, a.err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			answers <- a
		}()
	}
	// Every scan's headers have arrived while its body is still open at the
	// origin: release the second halves.
	timeout := time.After(30 * time.Second)
	for range callers {
		select {
		case <-headers:
		case <-timeout:
			t.Fatal("the scans' headers never all arrived")
		}
	}
	close(g.second)

	for range len(callers) + badges {
		var a answer
		select {
		case a = <-answers:
		case <-timeout:
			t.Fatal("not every request was answered")
		}
		if a.err != nil {
			t.Errorf("request %d (badge %v): %v", a.i, a.badge, a.err)
			continue
		}
		if a.badge {
			score, level, name := badgeScore(a.i)
			if want := badge.ForScore(score, level, name).SVG(); a.resp.StatusCode != 200 || string(a.body) != string(want) {
				t.Errorf("badge %d: %d, the badge of another site or none:\n%s", a.i, a.resp.StatusCode, a.body)
			}
			continue
		}
		c := callers[a.i]
		var got struct{ Caller, URL string }
		if err := json.Unmarshal(a.body, &got); err != nil || a.resp.StatusCode != 200 {
			t.Errorf("scan of %s: %d %q", c.key, a.resp.StatusCode, a.body)
			continue
		}
		if got.Caller != c.key || got.URL != a.target || a.resp.Header.Get("X-Echo-Url") != a.target {
			t.Errorf("scan of %s for %s was answered with %+v (X-Echo-Url %q)", c.key, a.target, got, a.resp.Header.Get("X-Echo-Url"))
		}
		limit, remaining := strconv.Itoa(c.limit), strconv.Itoa(c.limit-c.spend-1)
		if l, r := a.resp.Header.Get("X-RateLimit-Limit"), a.resp.Header.Get("X-RateLimit-Remaining"); l != limit || r != remaining {
			t.Errorf("scan of %s: allowance %s/%s, want %s/%s (its own count)", c.key, r, l, remaining, limit)
		}
	}
	logs := svc.logs.String()
	if n := strings.Count(logs, "started in this isolate"); n != 1 || strings.Contains(logs, "exited") {
		t.Errorf("the isolate started Go %d times for %d requests, want once:\n%s", n, len(callers)*2+badges, logs)
	}
	// The entry module checks that each request's Go code ran in that
	// request's own events, which is what keeps its I/O its own.
	if strings.Contains(logs, "crossed requests") {
		t.Errorf("a request's Go code ran on another's behalf:\n%s", logs)
	}
}
