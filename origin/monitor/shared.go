package monitor

import (
	"sync"
	"time"

	"github.com/agentready/agentready/engine/report"
)

// recentScans remembers, for a short while, the scans this service's runs
// made, so that a run takes the result of a scan of its site that began at
// or after the run was due instead of scanning the site again. Such a scan
// is as fresh as the run asked for: it is the scan the run would have made
// had it been claimed a moment earlier. It must also have begun after the
// monitor's previous run ended, so that two runs of one monitor never
// report the same scan (a run late by a cadence is followed at once by the
// next, which scans anew). Monitors of one site due together
// (a burst: many callers watching one site on the same cadence) then cost
// that site, and this origin, one scan; a run due after the scan began
// scans afresh. Runs that overlap a scan in flight already join it through
// the origin's one scan path; this covers the runs claimed just after it
// ended.
type recentScans struct {
	keep time.Duration // how long a scan is offered (the run lease: a run claimed later is late anyway)

	mu    sync.Mutex
	byURL map[string]recentScan
}

// recentScan is what a run needs of a scan: its report, and the part of it
// a run reads (slim).
type recentScan struct {
	began time.Time
	res   *report.Result
	raw   []byte
}

// slim keeps of r what a run reads: its time, score and level, and each
// check's id, name, status and message (what its events compare).
func slim(r *report.Result) *report.Result {
	s := &report.Result{URL: r.URL, Timestamp: r.Timestamp, CurrentLevel: r.CurrentLevel, Score: r.Score, Checks: make([]report.Check, len(r.Checks))}
	for i, c := range r.Checks {
		s.Checks[i] = report.Check{ID: c.ID, Name: c.Name, Status: c.Status, Message: c.Message}
	}
	return s
}

// maxRecentScans bounds the memory held: one report (about 25 KB) and its
// slim copy (about 5 KB) per site.
const maxRecentScans = 256

// get returns the scan of url that began at or after due and after
// lastRun, if one is kept.
func (r *recentScans) get(url string, due, lastRun, now time.Time) (recentScan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sc, ok := r.byURL[url]
	if !ok || sc.began.Before(due) || !sc.began.After(lastRun) || now.Sub(sc.began) > r.keep {
		return recentScan{}, false
	}
	return sc, true
}

// put keeps sc as url's latest scan, making room by dropping the scans too
// old to be offered, then the oldest.
func (r *recentScans) put(url string, sc recentScan, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byURL == nil {
		r.byURL = map[string]recentScan{}
	}
	if old, ok := r.byURL[url]; ok && old.began.After(sc.began) {
		return
	}
	if _, ok := r.byURL[url]; !ok && len(r.byURL) >= maxRecentScans {
		oldest := ""
		for u, s := range r.byURL {
			if now.Sub(s.began) > r.keep {
				delete(r.byURL, u)
				continue
			}
			if oldest == "" || s.began.Before(r.byURL[oldest].began) {
				oldest = u
			}
		}
		if len(r.byURL) >= maxRecentScans {
			delete(r.byURL, oldest)
		}
	}
	r.byURL[url] = sc
}
