package origin

import (
	"context"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

// The capture queue's rules, without a browser: the pool's "Chromium" is
// true(1), found but never started, so a capture fails at once (ErrStart).
// One entry per site, FIFO, bounded (a site arriving at a full queue is
// refused and remembered), a cached scan queues only a site known to lack
// its screenshot, and a failed site waits out its back-off whichever scan
// comes.
func TestCaptureQueueRules(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) binary")
	}
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	admitAll := func(netip.AddrPort) error { return nil }
	pool := browser.New(browser.Config{ExecPath: truePath, Tabs: 2, Check: admitAll})
	srv := New(Config{Browser: pool}, st, engine.New(engine.Options{}))
	sh := srv.shots
	defer sh.close()
	var skew atomic.Int64
	sh.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	site := func(i int) string { return "http://127.0.0.1:" + strconv.Itoa(i) + "/" } // an address literal: no DNS
	queued := func() []string {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		var urls []string
		for _, c := range sh.queue {
			urls = append(urls, c.url)
		}
		return urls
	}

	// No capture place: what is queued stays queued.
	sh.mu.Lock()
	sh.slots, sh.queueMax = 0, 3
	sh.mu.Unlock()
	sh.afterScan(site(1), true) // cached, nothing known missing: nothing
	sh.afterScan(site(1), false)
	sh.afterScan(site(2), false)
	sh.afterScan(site(1), false) // already queued: one entry per site
	sh.afterScan(site(3), false)
	sh.afterScan(site(4), false) // full: refused, remembered
	if q := queued(); !slices.Equal(q, []string{site(1), site(2), site(3)}) {
		t.Fatalf("queue %q, want sites 1, 2 and 3 in order", q)
	}
	if sh.refused.Load() != 1 || sh.capturing(site(4)) || sh.nMissing.Load() != 1 {
		t.Fatalf("refused %d, site 4 queued %v, %d missing", sh.refused.Load(), sh.capturing(site(4)), sh.nMissing.Load())
	}

	// Places again: the queue drains in order, each capture fails at once
	// (the browser does not start) and its site is remembered with a back-off.
	sh.mu.Lock()
	sh.slots, sh.queueMax = 2, captureQueue
	sh.mu.Unlock()
	sh.afterScan(site(4), true) // cached, and known missing: queued
	testenv.Eventually(t, 30*time.Second, "the queue to drain", func() bool {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return len(sh.pending) == 0 && sh.running == 0
	})
	if n := sh.taken.Load(); n != 4 {
		t.Fatalf("%d captures, want 4", n)
	}
	for i := 1; i <= 4; i++ {
		m, failed := sh.lastFailure(site(i))
		if !failed || !strings.Contains(m.why, "did not start") {
			t.Errorf("site %d: failure %v %+v", i, failed, m)
		}
	}
	// Within the back-off no scan queues them; after it, a cached scan does.
	for _, cached := range []bool{true, false} {
		sh.afterScan(site(1), cached)
		if sh.capturing(site(1)) {
			t.Fatalf("a scan (cached %v) within the back-off queued the site", cached)
		}
	}
	skew.Store(int64(retryBackoff + time.Second))
	sh.mu.Lock()
	sh.slots = 0 // so the queued entry stays observable
	sh.mu.Unlock()
	sh.afterScan(site(1), true)
	if !sh.capturing(site(1)) {
		t.Fatal("a cached scan after the back-off did not queue the site")
	}
	// A healthz answer reports the waiting capture without starting anything.
	if h := sh.health(); !strings.Contains(h, `"captures_waiting":1`) || !strings.Contains(h, `"paid":{"state":"idle"`) {
		t.Errorf("health %s", h)
	}
}

// The queue is fair per owner, not per URL: a registrable domain (wildcard
// DNS gives it any number of names) and each address a site resolves to
// (one server on many ports or names; IPv6 by its /64) may have ownerShare
// captures waiting and one running, so one owner with hanging pages can
// neither fill the queue nor hold every tab while others wait.
func TestCaptureQueueIsFairPerOwner(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) binary")
	}
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pool := browser.New(browser.Config{ExecPath: truePath, Tabs: 4, Check: func(netip.AddrPort) error { return nil }})
	srv := New(Config{Browser: pool}, st, engine.New(engine.Options{}))
	sh := srv.shots
	defer sh.close()
	dns := map[string][]netip.Addr{
		"a.example":            {netip.MustParseAddr("203.0.113.9")},
		"b.example":            {netip.MustParseAddr("203.0.113.9")}, // another name of a's server
		"one.wild.example":     {netip.MustParseAddr("198.51.100.1")},
		"two.wild.example":     {netip.MustParseAddr("198.51.100.2")},
		"v6.example":           {netip.MustParseAddr("2001:db8:5:6::1")},
		"v6-neighbour.example": {netip.MustParseAddr("2001:db8:5:6::ffff")}, // the same /64
		"other.example":        {netip.MustParseAddr("192.0.2.44")},
	}
	sh.resolve = func(_ context.Context, host string) ([]netip.Addr, error) { return dns[host], nil }
	owners := func(url string) []string {
		return ownersOf(hostOf(url), dns[hostOf(url)])
	}
	shareOf := func(a, b string) bool {
		for _, o := range owners(a) {
			if slices.Contains(owners(b), o) {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"http://203.0.113.9:8001/", "http://203.0.113.9:8002/", true},
		{"https://a.example/", "https://b.example/", true},
		{"https://one.wild.example/", "https://two.wild.example/", true},
		{"https://v6.example/", "https://v6-neighbour.example/", true},
		{"https://a.example/", "https://other.example/", false},
		{"http://[2001:db8:5:6::1]:81/", "https://v6.example/", true},
	} {
		if got := shareOf(c.a, c.b); got != c.same {
			t.Errorf("%s and %s share an owner: %v, want %v", c.a, c.b, got, c.same)
		}
	}

	// No capture place: twelve ports of one server, then another site.
	sh.mu.Lock()
	sh.slots = 0
	for port := 8001; port <= 8012; port++ {
		sh.enqueueLocked("http://203.0.113.9:"+strconv.Itoa(port)+"/", owners("http://203.0.113.9:8001/"))
	}
	sh.enqueueLocked("https://other.example/", owners("https://other.example/"))
	n, refused := len(sh.queue), sh.refused.Load()
	// One capture of the server running: the next to start is the other
	// site's, although the server's waited longer.
	server := owners("http://203.0.113.9:8001/")
	for _, o := range server {
		sh.active[o]++
	}
	// Exactly one capture may start: more than none, not more than one.
	next, claimable := sh.nextLocked(), 0
	if sh.claimableLocked(0) {
		claimable = 1
		if sh.claimableLocked(1) {
			claimable = 2
		}
	}
	nextURL := ""
	if next >= 0 {
		nextURL = sh.queue[next].url
	}
	for _, o := range server {
		sh.active[o]--
	}
	sh.mu.Unlock()
	if n != ownerShare+1 || refused != 12-ownerShare {
		t.Errorf("queued %d and refused %d, want the server's %d and the other site", n, refused, ownerShare)
	}
	if nextURL != "https://other.example/" || claimable != 1 {
		t.Errorf("with the server capturing, next %q (%d claimable), want the other site", nextURL, claimable)
	}

	// A host name is resolved off the scan's path, then queued by owner.
	sh.afterScan("https://v6.example/", false)
	sh.afterScan("https://v6-neighbour.example/", false)
	testenv.Eventually(t, 30*time.Second, "both names to resolve", func() bool {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return sh.queued["addr 2001:db8:5:6::/64"] == 2
	})
}
