package origin

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

// shotServer runs a server over an embedded store with pool as its
// background browser, until the test ends; get asks it (and fails the test
// on a transport error).
func shotServer(t *testing.T, pool *browser.Pool) (srv *Server, st store.Backend, base string, get func(path string) (*http.Response, []byte)) {
	t.Helper()
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy := loopback.Policy()
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: policy}})
	srv = New(Config{AllowPrivate: true, Browser: pool}, st, sc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		st.Close()
	})
	base = "http://" + ln.Addr().String()
	get = func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	return srv, st, base, get
}

// startSite serves a fixture directory under testdata until the test ends.
func startSite(t *testing.T, dir ...string) *fixture.Site {
	t.Helper()
	return startSiteOn(t, "", dir...)
}

// startSiteOn serves a fixture site on a loopback address of its own ("":
// 127.0.0.1), a server of its own to the capture queue's fairness.
func startSiteOn(t *testing.T, ip string, dir ...string) *fixture.Site {
	t.Helper()
	var opts []fixture.Option
	if ip != "" {
		opts = append(opts, fixture.WithAddress(ip))
	}
	s, err := fixture.Start(filepath.Join(append([]string{"..", "testdata"}, dir...)...), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A scan captures the site's homepage in the background with real Chromium:
// the scan answers first, the PNG (1280×800) lands in the store, and a
// second fresh scan within the TTL takes no new capture.
func TestScreenshotCapturedAfterScan(t *testing.T) {
	chromium := testenv.Chromium(t)
	site, err := fixture.Start(filepath.Join("..", "testdata", "sites", "full"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	policy := loopback.Policy()
	pool := browser.New(browser.Config{ExecPath: chromium, Tabs: 2, Policy: policy})
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: policy}})
	srv := New(Config{AllowPrivate: true, Browser: pool}, st, sc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if pool.Health().Started {
			t.Error("Shutdown left the browser running")
		}
	}()
	base := "http://" + ln.Addr().String()
	get := func(u string) (*http.Response, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	key, aerr := srv.scans.validateURL(site.URL)
	if aerr != nil {
		t.Fatal(aerr)
	}

	if r, b := get(base + "/api/scan?format=json&url=" + url.QueryEscape(site.URL)); r.StatusCode != 200 {
		t.Fatalf("scan: %d %s", r.StatusCode, b)
	}
	// The scan answered while the browser had not captured yet (a cold
	// Chromium takes far longer to start than the scan of a loopback site).
	if _, err := st.Screenshots().Get(context.Background(), key); err == nil {
		t.Error("the screenshot existed when the scan answered: the capture is on the scan's path")
	}

	var shot []byte
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, b := get(base + "/api/screenshot?url=" + url.QueryEscape(site.URL))
		if r.StatusCode == 200 {
			shot = b
			break
		}
		if r.StatusCode != 503 && r.StatusCode != 404 {
			t.Fatalf("while capturing: %d %s", r.StatusCode, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no screenshot within 60 s (last answer %d %s; browser %s)", r.StatusCode, b, srv.shots.health())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Fatalf("screenshot: %v %dx%d, want a 1280x800 PNG", err, cfg.Width, cfg.Height)
	}
	if n := srv.shots.taken.Load(); n != 1 {
		t.Fatalf("%d captures for one scan", n)
	}

	// A fresh scan within the TTL: the stored screenshot is young enough.
	if r, b := get(base + "/api/scan?format=json&fresh=1&url=" + url.QueryEscape(site.URL)); r.StatusCode != 200 {
		t.Fatalf("fresh scan: %d %s", r.StatusCode, b)
	}
	deadline = time.Now().Add(10 * time.Second)
	for srv.shots.capturing(key) {
		if time.Now().After(deadline) {
			t.Fatal("the capture check did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.scans.persist.Wait()
	if n := srv.shots.taken.Load(); n != 1 {
		t.Errorf("%d captures after a second scan within the TTL, want 1", n)
	}
}

// Background captures wait in a fair queue, with real Chromium. Two pages
// that never finish loading hold both capture places only until the
// capture deadline, and the next site in line is captured right after; a
// site refused at a full queue is captured by its next scan even when that
// scan is served from the cache; a site whose capture timed out is not tried
// again, by any scan, until its back-off has passed.
func TestCaptureQueueIsFair(t *testing.T) {
	chromium := testenv.Chromium(t)
	pool := browser.New(browser.Config{ExecPath: chromium, Tabs: 2, Policy: loopback.Policy()})
	srv, st, _, get := shotServer(t, pool)
	sh := srv.shots
	if sh.slots != 2 {
		t.Fatalf("%d capture places for a pool of 2 tabs", sh.slots)
	}
	// The production deadline (15 s): the stalling captures must still hold
	// both places while the next sites are scanned.
	var skew atomic.Int64 // moves the shooter's clock past a back-off
	sh.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

	// Four servers (the queue is fair per server: one of them captures at a time).
	stallA, stallB := startSiteOn(t, "127.0.0.2", "browser", "stall"), startSiteOn(t, "127.0.0.3", "browser", "stall")
	normal, refused := startSiteOn(t, "127.0.0.4", "sites", "full"), startSiteOn(t, "127.0.0.5", "sites", "spa")
	key := func(s *fixture.Site) string {
		k, aerr := srv.scans.validateURL(s.URL)
		if aerr != nil {
			t.Fatal(aerr)
		}
		return k
	}
	scan := func(s *fixture.Site, fresh bool) {
		t.Helper()
		q := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
		if fresh {
			q += "&fresh=1"
		}
		if r, b := get(q); r.StatusCode != 200 {
			t.Fatalf("scan %s: %d %.200s", s.URL, r.StatusCode, b)
		}
	}
	shot := func(s *fixture.Site) (*http.Response, []byte) {
		return get("/api/screenshot?url=" + url.QueryEscape(s.URL))
	}
	waitFor := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (browser %s)", what, within, sh.health())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stored := func(s *fixture.Site) bool {
		_, err := st.Screenshots().Get(context.Background(), key(s))
		return err == nil
	}

	// The two stalling pages take both places.
	scan(stallA, false)
	scan(stallB, false)
	waitFor("both stalling captures to start", 60*time.Second, func() bool { return sh.taken.Load() == 2 })
	for _, s := range []*fixture.Site{stallA, stallB} {
		if slices.ContainsFunc(s.Hits(), func(h fixture.Hit) bool { return h.Path == "/stall.js" }) {
			continue
		}
		waitFor("the browser to ask for /stall.js", 30*time.Second, func() bool {
			return slices.ContainsFunc(s.Hits(), func(h fixture.Hit) bool { return h.Path == "/stall.js" })
		})
	}
	// A queue of one: the normal site waits its turn, the next is refused.
	sh.mu.Lock()
	sh.queueMax = 1
	sh.mu.Unlock()
	queuedAt := time.Now()
	scan(normal, false)
	scan(refused, false)
	if !sh.capturing(key(normal)) || sh.capturing(key(refused)) || sh.refused.Load() != 1 {
		t.Fatalf("queued %v, refused %v (%d refusals): want the first queued and the second refused",
			sh.capturing(key(normal)), sh.capturing(key(refused)), sh.refused.Load())
	}
	if r, b := shot(normal); r.StatusCode != 503 || !strings.Contains(string(b), "capture queue") {
		t.Errorf("screenshot of a queued site: %d %s", r.StatusCode, b)
	}
	// Its screenshot lands once a stalling capture reaches its deadline:
	// within the deadline plus one capture, not after both stalls and more.
	waitFor("the queued site's screenshot", sh.deadline+30*time.Second, func() bool { return stored(normal) })
	t.Logf("queued site captured %v after its scan (capture deadline %v)", time.Since(queuedAt).Round(time.Millisecond), sh.deadline)
	if r, _ := shot(normal); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("GET /api/screenshot of the queued site: %d", r.StatusCode)
	}

	// The refused site: nothing stored, then a scan served from the cache
	// queues it again and it is captured.
	sh.mu.Lock()
	sh.queueMax = captureQueue
	sh.mu.Unlock()
	if stored(refused) {
		t.Fatal("the refused site was captured without another scan")
	}
	hits := srv.m.cacheHits.Load()
	scan(refused, false)
	if srv.m.cacheHits.Load() != hits+1 {
		t.Fatal("the second scan of the refused site was not served from the cache")
	}
	waitFor("the refused site's screenshot after a cached scan", sh.deadline+30*time.Second, func() bool { return stored(refused) })

	// The stalling sites timed out: reported, and in back-off.
	waitFor("the stalling captures to end", sh.deadline+30*time.Second, func() bool {
		return !sh.capturing(key(stallA)) && !sh.capturing(key(stallB))
	})
	r, b := shot(stallA)
	if r.StatusCode != 404 || !strings.Contains(string(b), "last capture failed") || !strings.Contains(string(b), "did not finish loading") {
		t.Errorf("screenshot of a site whose capture timed out: %d %s", r.StatusCode, b)
	}
	taken := sh.taken.Load()
	for _, fresh := range []bool{false, true} {
		scan(stallA, fresh)
		if sh.capturing(key(stallA)) || sh.taken.Load() != taken {
			t.Fatalf("a scan (fresh %v) within the back-off queued the timed-out site again", fresh)
		}
	}
	// Past the back-off, the next scan (from the cache) tries again.
	skew.Store(int64(captureBackoff + time.Second))
	scan(stallA, false)
	if !sh.capturing(key(stallA)) {
		t.Fatal("a cached scan after the back-off did not queue the site again")
	}
	waitFor("the retried capture to run", 30*time.Second, func() bool { return sh.taken.Load() == taken+1 })
}
