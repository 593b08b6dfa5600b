package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/origin/store"
)

// timings records how long each store call the origin makes takes, while on:
// where a drain's time goes when the cores are not what limits it.
type timings struct {
	// completed counts runs recorded (CompleteRun without error), always.
	completed atomic.Int64
	on        atomic.Bool
	mu        sync.Mutex
	ops       map[string][]time.Duration
}

func (t *timings) since(op string, start time.Time) {
	if !t.on.Load() {
		return
	}
	d := time.Since(start)
	t.mu.Lock()
	if t.ops == nil {
		t.ops = map[string][]time.Duration{}
	}
	t.ops[op] = append(t.ops[op], d)
	t.mu.Unlock()
}

// table prints one row per store call: count, total time spent in it (calls
// overlap, so totals can exceed the wall clock), p50, p99, max.
func (t *timings) table(wall time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.ops))
	total := map[string]time.Duration{}
	for n, ds := range t.ops {
		names = append(names, n)
		for _, d := range ds {
			total[n] += d
		}
	}
	sort.Slice(names, func(i, j int) bool { return total[names[i]] > total[names[j]] })
	fmt.Fprintf(out, "\nStore calls during the drain (%s of wall clock):\n\n", wall.Round(100*time.Millisecond))
	fmt.Fprintln(out, "| store call | calls | time in calls | p50 | p99 | max |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, n := range names {
		ds := t.ops[n]
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s |\n", n, len(ds), total[n].Round(100*time.Millisecond),
			round(benchkit.Pct(ds, 0.5)), round(benchkit.Pct(ds, 0.99)), round(benchkit.Pct(ds, 1)))
	}
}

// timedBackend is the store with the calls a monitor run and a delivery make
// timed; everything else passes through.
type timedBackend struct {
	store.Backend
	t *timings
}

func (b timedBackend) Monitors() store.Monitors   { return timedMonitors{b.Backend.Monitors(), b.t} }
func (b timedBackend) ScanCache() store.ScanCache { return timedCache{b.Backend.ScanCache(), b.t} }
func (b timedBackend) History() store.History     { return timedHistory{b.Backend.History(), b.t} }

type timedMonitors struct {
	store.Monitors
	t *timings
}

func (m timedMonitors) Get(ctx context.Context, id string) (store.Monitor, error) {
	defer m.t.since("Monitors.Get", time.Now())
	return m.Monitors.Get(ctx, id)
}

func (m timedMonitors) ClaimRuns(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.RunClaim, error) {
	defer m.t.since("Monitors.ClaimRuns", time.Now())
	return m.Monitors.ClaimRuns(ctx, now, lease, limit)
}

func (m timedMonitors) CompleteRun(ctx context.Context, c store.RunClaim, st store.RunState, next time.Time, report []byte, ttl time.Duration, ds []store.Delivery, claimFor time.Duration) ([]store.DeliveryClaim, error) {
	defer m.t.since("Monitors.CompleteRun", time.Now())
	claims, err := m.Monitors.CompleteRun(ctx, c, st, next, report, ttl, ds, claimFor)
	if err == nil {
		m.t.completed.Add(1)
	}
	return claims, err
}

func (m timedMonitors) ReleaseRun(ctx context.Context, c store.RunClaim, at time.Time) error {
	defer m.t.since("Monitors.ReleaseRun", time.Now())
	return m.Monitors.ReleaseRun(ctx, c, at)
}

func (m timedMonitors) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.DeliveryClaim, error) {
	defer m.t.since("Monitors.ClaimDeliveries", time.Now())
	return m.Monitors.ClaimDeliveries(ctx, now, lease, limit)
}

func (m timedMonitors) FinishAttempt(ctx context.Context, c store.DeliveryClaim, a store.Attempt) (bool, error) {
	defer m.t.since("Monitors.FinishAttempt", time.Now())
	return m.Monitors.FinishAttempt(ctx, c, a)
}

type timedCache struct {
	store.ScanCache
	t *timings
}

func (c timedCache) Put(ctx context.Context, url string, report []byte, at time.Time, ttl time.Duration) error {
	defer c.t.since("ScanCache.Put", time.Now())
	return c.ScanCache.Put(ctx, url, report, at, ttl)
}

type timedHistory struct {
	store.History
	t *timings
}

func (h timedHistory) Record(ctx context.Context, e store.HistoryEntry) error {
	defer h.t.since("History.Record", time.Now())
	return h.History.Record(ctx, e)
}

// statusMB reads one kB field of /proc/self/status in MiB (RssAnon: the
// process's own memory, without the store file it maps).
func statusMB(field string) float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
