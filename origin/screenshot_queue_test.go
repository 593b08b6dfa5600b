package origin

import (
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
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
		return slices.Clone(sh.queue)
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
	waitUntil(t, "the queue to drain", func() bool {
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

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
