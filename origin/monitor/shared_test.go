package monitor

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
)

// A run takes a kept scan of its site only if the scan began at or after
// the run was due and after the monitor's previous run ended, and while
// the scan is still offered; each case says why.
func TestRecentScansOffer(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	r := &recentScans{keep: 2 * time.Minute}
	r.put("https://a.example/", recentScan{began: t0, res: &report.Result{Score: report.Score{Value: 70}}, raw: []byte("report a")}, t0)
	for _, c := range []struct {
		name         string
		url          string
		due, lastRun time.Time
		now          time.Time
		want         bool
	}{
		{"due before the scan began: as fresh as it asked", "https://a.example/", t0.Add(-time.Second), time.Time{}, t0.Add(time.Second), true},
		{"due exactly when it began", "https://a.example/", t0, time.Time{}, t0.Add(time.Second), true},
		{"due after it began: the run scans anew", "https://a.example/", t0.Add(time.Second), time.Time{}, t0.Add(2 * time.Second), false},
		{"the monitor's previous run ended after it began (it may have used it)", "https://a.example/", t0.Add(-time.Second), t0.Add(time.Second), t0.Add(2 * time.Second), false},
		{"the previous run ended before it began", "https://a.example/", t0.Add(-time.Second), t0.Add(-time.Minute), t0.Add(2 * time.Second), true},
		{"kept longer than offered", "https://a.example/", t0.Add(-time.Second), time.Time{}, t0.Add(3 * time.Minute), false},
		{"another site", "https://b.example/", t0.Add(-time.Second), time.Time{}, t0.Add(time.Second), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, ok := r.get(c.url, c.due, c.lastRun, c.now)
			if ok != c.want || (ok && (sc.res.Score.Value != 70 || string(sc.raw) != "report a")) {
				t.Errorf("got %v (%+v), want %v", ok, sc, c.want)
			}
		})
	}
}

// The memory is bounded: past maxRecentScans sites the oldest scan goes,
// and an older scan never replaces a newer one of the same site.
func TestRecentScansBounded(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	r := &recentScans{keep: time.Hour}
	for i := range maxRecentScans + 10 {
		r.put(fmt.Sprintf("https://site-%d.example/", i), recentScan{began: t0.Add(time.Duration(i) * time.Second)}, t0.Add(time.Duration(i)*time.Second))
	}
	if n := len(r.byURL); n != maxRecentScans {
		t.Fatalf("%d scans kept, want %d", n, maxRecentScans)
	}
	if _, ok := r.byURL["https://site-0.example/"]; ok {
		t.Error("the oldest scan was kept over newer ones")
	}
	newest := fmt.Sprintf("https://site-%d.example/", maxRecentScans+9)
	r.put(newest, recentScan{began: t0}, t0.Add(time.Hour))
	if got := r.byURL[newest].began; !got.Equal(t0.Add(time.Duration(maxRecentScans+9) * time.Second)) {
		t.Errorf("an older scan replaced a newer one: began %s", got)
	}
}
