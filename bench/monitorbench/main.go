// Command monitorbench measures one origin draining a burst of monitors
// (docs/benchmarks.md, "Monitors: 10,000 due in the same minute on one
// origin"): N monitors due in the same minute, each scanning one of a few
// loopback fixture sites and delivering a signed scan.completed webhook to a
// loopback receiver, while an interactive client keeps asking for fresh
// scans of another site through the origin's HTTP API.
//
//	go run ./bench/monitorbench                     (or: make bench-monitors)
//	go run ./bench/monitorbench -workers 16 -monitors 2000 -spread 1m
//	go run ./bench/monitorbench -redis redis://127.0.0.1:6379/0 -cpuprofile /tmp/mon.pprof
//	go run ./bench/monitorbench -redis redis://127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003
//
// Everything runs in this process on loopback: the fixture sites, the origin
// (origin.New + Serve, the embedded store in a temporary directory unless
// -redis is given), the receiver, and the interactive client. The monitors
// are inserted directly through the store (Create, no quota), all due at the
// same instant by default (-spread spreads the due times evenly), with a
// daily cadence so each runs exactly once during the bench.
//
// The interactive baseline is measured first, on an origin over the empty
// store; then the monitors are inserted, due a little after the insertion
// ends (-lead), a second origin starts on the same store, and the same
// interactive client runs again while they drain. Besides the summary it
// prints how long each store call took during the drain: where the time goes
// when the cores are not what limits it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/webhook"
)

var (
	nMonitors   = flag.Int("monitors", 10000, "monitors due in the burst")
	workers     = flag.Int("workers", 0, "monitor workers: scheduled scans at once (0: the origin's default, 8)")
	senders     = flag.Int("senders", 0, "deliveries in flight at once (0: the origin's default, 16)")
	nSites      = flag.Int("sites", 64, "fixture sites the monitors are spread over (round robin over full, peer, partial, empty, soft404)")
	spread      = flag.Duration("spread", 0, "spread the due times evenly over this long (0: all due at the same instant)")
	redisURL    = flag.String("redis", "", "run on this Redis (redis://host:port/db) or Redis Cluster (redis://host:port,host:port,…) instead of the embedded store")
	rate        = flag.Float64("interactive", 4, "interactive fresh scans per second (one client, one at a time)")
	baselineFor = flag.Duration("baseline", 15*time.Second, "how long the interactive client runs with no monitors")
	lead        = flag.Duration("lead", 0, "the monitors are due this long after their insertion starts (0: estimated from -monitors and the store)")
	timeout     = flag.Duration("timeout", 10*time.Minute, "give up on the drain after this long")
	cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the drain to this file")
	keep        = flag.Bool("keep", false, "keep the embedded store's directory (to inspect the file) and print where it is")
)

// out is where the results go (a test reads them).
var out io.Writer = os.Stdout

// kinds are the fixture sites the monitors scan: the ones that scan cleanly
// (the hostile and slow ones are other benchmarks' business).
var kinds = []string{"full", "peer", "partial", "empty", "soft404"}

func main() {
	flag.Parse()
	if *nMonitors < 1 || *nSites < 1 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "monitorbench: -monitors, -sites and -interactive must be above 0")
		os.Exit(2)
	}
	os.Exit(run())
}

// run is the bench; its deferred cleanups (servers, the store, a Redis
// prefix) run before main exits with its status.
func run() int {
	sitesDir := filepath.Join("testdata", "sites")
	if _, err := os.Stat(sitesDir); err != nil {
		fmt.Fprintln(os.Stderr, "monitorbench: run it from the repository root (it serves testdata/sites): go run ./bench/monitorbench")
		return 2
	}

	// The sites the monitors scan, and the one the interactive client scans:
	// a site of its own, so its fresh scans never join a monitor's flight.
	urls := make([]string, *nSites)
	var sites []*fixture.Site
	for i := range urls {
		s := benchkit.Must(fixture.Start(filepath.Join(sitesDir, kinds[i%len(kinds)])))
		defer s.Close()
		sites = append(sites, s)
		urls[i] = benchkit.Must(engine.NormalizeURL(s.URL)).String()
	}
	inter := benchkit.Must(fixture.Start(filepath.Join(sitesDir, "full")))
	defer inter.Close()
	sites = append(sites, inter)
	// The sites log every request for tests; 10,000 scans would make that
	// log tens of MB of this process's memory, which is not the origin's.
	forget := func() {
		for _, s := range sites {
			s.ResetHits()
		}
	}

	secret := benchkit.Must(webhook.NewSecret())
	rcv := newReceiver(secret)
	defer rcv.srv.Close()

	raw, stName, limiter, dbFile, cleanup := openStore()
	defer cleanup()
	times := &timings{}
	st := timedBackend{raw, times}

	// Two origins on the same store, one after the other: the first serves
	// the baseline with no monitor stored; the second starts once every
	// monitor is inserted, so no run overlaps the insertion.
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
	cfg := origin.Config{AllowPrivate: true, Limiter: limiter, Monitors: monitor.Config{Workers: *workers, Senders: *senders}}
	// The defaults as the monitor service applies them (a service that is never run).
	eff := monitor.New(cfg.Monitors, monitor.Deps{}).Config()
	effWorkers, effSenders := eff.Workers, eff.Senders

	benchkit.Header(fmt.Sprintf("; %s state; everything (sites, origin, receiver, interactive client) in one process on loopback; load average %s at the start", stName, benchkit.LoadAverage(1)))
	what := fmt.Sprintf("%d monitors due at the same instant", *nMonitors)
	if *spread > 0 {
		what = fmt.Sprintf("%d monitors due evenly over %s", *nMonitors, *spread)
	}
	what += fmt.Sprintf(", %d sites, %d monitor workers, %d senders, %s state", *nSites, effWorkers, effSenders, stName)

	// Baseline: the interactive client alone.
	forget()
	runtime.GC()
	rssIdle := benchkit.RSSMB()
	first := origin.New(cfg, st, sc)
	lnA := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	go first.Serve(lnA)
	scanPath := "/api/scan?format=json&fresh=1&url=" + url.QueryEscape(inter.URL)
	baseline := interactive("http://"+lnA.Addr().String()+scanPath, time.Now().Add(*baselineFor), nil)
	first.Shutdown(context.Background())

	// The burst: insert, start the origin, wait for the due instant.
	l := *lead
	if l <= 0 {
		// bbolt commits one fsynced transaction per Create: 0.5–7 ms each
		// on this machine's shared disk, depending on what else writes. On
		// Redis a Create is a read and two scripts (its quota, then the
		// monitor).
		per := 5 * time.Millisecond
		if stName != "embedded" {
			per = 600 * time.Microsecond
		}
		l = 5*time.Second + time.Duration(*nMonitors)*per
	}
	ln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	base := "http://" + ln.Addr().String()
	target := base + scanPath
	insStart := time.Now()
	due := insStart.Add(l).Truncate(time.Millisecond) // the store keeps milliseconds
	insertMonitors(st.Monitors(), urls, rcv.srv.URL, secret, base, due)
	insTook := time.Since(insStart)
	srv := origin.New(cfg, st, sc)
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	// The drain is timed from the due instant, or from the origin's start
	// when the insertion ran past it (then every run was overdue already).
	start, overran := due, time.Since(due)
	if overran > 0 {
		start = time.Now()
		fmt.Fprintf(os.Stderr, "warning: inserting took %s, %s past the due instant; raise -lead\n", insTook.Round(time.Millisecond), overran.Round(time.Millisecond))
	}
	missesBefore := metric(srv, "agentready_scan_cache_misses_total")
	failedBefore := metric(srv, "agentready_scans_failed_total")
	for time.Now().Before(due) {
		time.Sleep(time.Until(due)) // waiting for a wall-clock instant, not for work
	}

	var stopProfile func()
	if *cpuProfile != "" {
		f := benchkit.Must(os.Create(*cpuProfile))
		benchkit.Must(0, pprof.StartCPUProfile(f))
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	cpu0, written0 := cpuTime(), writtenBytes()
	commits0 := commitStats(raw)
	mBusy0, mTotal0 := machineCPU()
	times.on.Store(true)
	done := make(chan struct{})
	var during result
	var interWG sync.WaitGroup
	interWG.Add(1)
	go func() {
		defer interWG.Done()
		during = interactive(target, time.Now().Add(*timeout), done)
	}()

	// Drained: every monitor's scan.completed has been received.
	deadline := start.Add(*timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	lastReport := time.Now()
	anonPeak := 0.0
	for rcv.monitors() < *nMonitors && time.Now().Before(deadline) {
		<-tick.C
		forget()
		anonPeak = max(anonPeak, statusMB("RssAnon:"))
		if time.Since(lastReport) >= 10*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(os.Stderr, "t+%s: %d runs recorded, %d/%d monitors delivered\n", time.Since(start).Round(time.Second), times.completed.Load(), rcv.monitors(), *nMonitors)
		}
	}
	tick.Stop()
	times.on.Store(false)
	cpu, written := cpuTime()-cpu0, writtenBytes()-written0
	commits := commitStats(raw)
	commits.Commits -= commits0.Commits
	commits.Writes -= commits0.Writes
	mBusy, mTotal := machineCPU()
	machineBusy := 100 * (mBusy - mBusy0) / (mTotal - mTotal0)
	if stopProfile != nil {
		stopProfile()
	}
	close(done)
	interWG.Wait()
	runs := times.completed.Load()
	misses := metric(srv, "agentready_scan_cache_misses_total") - missesBefore - int64(during.fresh)
	failed := metric(srv, "agentready_scans_failed_total") - failedBefore

	evs, got := rcv.snapshot()
	var firstAt, last time.Time
	delays := make([]time.Duration, 0, len(evs))
	for _, e := range evs {
		if firstAt.IsZero() || e.at.Before(firstAt) {
			firstAt = e.at
		}
		if e.at.After(last) {
			last = e.at
		}
		delays = append(delays, e.at.Sub(e.scheduled))
	}
	if got < *nMonitors {
		fmt.Fprintf(os.Stderr, "monitorbench: only %d of %d monitors delivered within -timeout %s; the table says what the store recorded for them (raise -timeout, or lower -monitors, on a slow or busy machine)\n", got, *nMonitors, *timeout)
	}
	drain := time.Since(start)
	if len(evs) > 0 {
		drain = last.Sub(start)
	}
	steady := 0.0
	if len(evs) > 1 {
		steady = float64(len(evs)-1) / last.Sub(firstAt).Seconds()
	}
	check := verify(st.Monitors(), rcv)

	fmt.Fprintf(out, "| %s: time to drain (from the due instant to the last scan.completed received) | — | **%s**%s |\n", what, drain.Round(100*time.Millisecond), incomplete(got, *nMonitors))
	fmt.Fprintf(out, "| deliveries received | — | %d events for %d monitors (%d received twice, %d bad signatures); **%.0f/s** over the drain, %.0f/s from the first to the last |\n",
		rcv.total.Load(), got, rcv.dups.Load(), rcv.bad.Load(), float64(len(evs))/drain.Seconds(), steady)
	if len(delays) > 0 {
		fmt.Fprintf(out, "| delay past due (receipt − data.scheduled_for) | — | p50 %s, p99 %s, max %s; first receipt %s after the due instant |\n",
			round(benchkit.Pct(delays, 0.5)), round(benchkit.Pct(delays, 0.99)), round(benchkit.Pct(delays, 1)), round(firstAt.Sub(start)))
	}
	fmt.Fprintf(out, "| scans the monitors' runs cost | — | %d scans for %d runs recorded (the other runs joined a scan of the same site already running); %d failed; %s |\n", misses, runs, failed, check)
	fmt.Fprintf(out, "| interactive fresh scan (GET /api/scan?fresh=1&format=json, `full` site, ≤ %.0f/s), no monitors | — | %s |\n", *rate, baseline)
	fmt.Fprintf(out, "| same, while the monitors drain | — | %s |\n", during)
	fmt.Fprintf(out, "| process CPU during the drain (getrusage; sites, receiver and client included) | — | %.1f s, %.2f ms per monitor (%.0f%% of %d cores; the whole machine was %.0f%% busy) |\n", cpu.Seconds(), cpu.Seconds()*1000/float64(*nMonitors), 100*cpu.Seconds()/drain.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU(), machineBusy)
	grouped := ""
	if commits.Commits > 0 {
		grouped = fmt.Sprintf("; %d commits carried %d store writes (%.1f each), %.0f KB per commit", commits.Commits, commits.Writes, float64(commits.Writes)/float64(commits.Commits), float64(written)/1024/float64(commits.Commits))
	}
	fmt.Fprintf(out, "| written to disk during the drain (/proc/self/io write_bytes) | — | %.0f MB, %.0f KB per monitor%s |\n", float64(written)/(1<<20), float64(written)/1024/float64(*nMonitors), grouped)
	mapped := ""
	if dbFile != "" {
		if fi, err := os.Stat(dbFile); err == nil {
			mapped = fmt.Sprintf(", which counts the pages of the store file it maps (%.0f MB at the end)", float64(fi.Size())/(1<<20))
		}
	}
	fmt.Fprintf(out, "| peak RSS | — | %.0f MB%s; anonymous memory (RssAnon) at most %.0f MB during the drain; %.0f MB idle before the baseline |\n", benchkit.PeakRSSMB(), mapped, anonPeak, rssIdle)
	fmt.Fprintf(out, "| inserting the %d monitors (store.Create, one at a time) | — | %s (%.0f/s)%s |\n", *nMonitors, insTook.Round(time.Millisecond), float64(*nMonitors)/insTook.Seconds(), overlap(overran))
	times.table(drain)
	fmt.Fprintf(out, "\nLoad average at the end: %s.\n", benchkit.LoadAverage(1))
	if *cpuProfile != "" {
		fmt.Fprintf(os.Stderr, "CPU profile of the drain: go tool pprof -top %s\n", *cpuProfile)
	}
	if got < *nMonitors {
		return 1
	}
	return 0
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}

func incomplete(got, want int) string {
	if got < want {
		return fmt.Sprintf(" — INCOMPLETE: %d of %d monitors delivered when the bench gave up", got, want)
	}
	return ""
}

func overlap(d time.Duration) string {
	if d > 0 {
		return fmt.Sprintf("; it ran %s past the due instant, so the origin started late: the drain is timed from its start, and every delay past due includes those %s", d.Round(time.Millisecond), d.Round(time.Millisecond))
	}
	return ""
}

// openStore opens the state store the origin runs on, with the rate limiter
// the origin would pick for it (it cannot see through the timing wrapper)
// and, embedded, the file it lives in.
func openStore() (st store.Backend, name string, limiter ratelimit.Limiter, file string, cleanup func()) {
	if *redisURL != "" {
		r := benchkit.Must(store.OpenRedis(context.Background(), *redisURL))
		name := "redis"
		if r.Cluster() {
			name = "redis-cluster"
		}
		view := r.WithPrefix(fmt.Sprintf("monitorbench:%d:", time.Now().UnixNano()))
		return view, name, ratelimit.NewRedis(r.Client()), "", func() {
			// The bench leaves nothing behind in a Redis it was lent.
			view.DeleteAll(context.Background())
			r.Close()
		}
	}
	dir := benchkit.Must(os.MkdirTemp("", "monitorbench"))
	e := benchkit.Must(store.OpenEmbedded(dir))
	return e, "embedded", nil, filepath.Join(dir, "agentready.db"), func() {
		e.Close()
		if *keep {
			fmt.Fprintf(os.Stderr, "the store is kept in %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}
}

// commitStats is the embedded store's count of commits (zero on Redis).
func commitStats(b store.Backend) store.EmbeddedStats {
	if e, ok := b.(*store.Embedded); ok {
		return e.Stats()
	}
	return store.EmbeddedStats{}
}

// insertMonitors creates the monitors as POST /api/monitors would store them,
// without the per-caller quota (store.Create with max 0).
func insertMonitors(ms store.Monitors, urls []string, callback, secret, base string, due time.Time) {
	now := time.Now().UTC()
	for i := 0; i < *nMonitors; i++ {
		at := due
		if *spread > 0 {
			at = due.Add(time.Duration(int64(*spread) * int64(i) / int64(*nMonitors)))
		}
		m := store.Monitor{
			ID: benchkit.Must(webhook.NewID("mon")), URL: urls[i%len(urls)], CallbackURL: callback,
			Cadence: "daily", Interval: 24 * time.Hour, Events: []string{webhook.EventScanCompleted},
			Secret: secret, Quota: "bench", Created: now.Truncate(time.Second), BaseURL: base,
		}
		benchkit.Must(0, ms.Create(context.Background(), m, at, 0, 0))
	}
}

// receiver is the webhook receiver: it verifies each delivery as docs/webhooks.md
// tells receivers to, and records when each event arrived.
type receiver struct {
	srv    *httptest.Server
	secret string

	mu     sync.Mutex
	events map[string]received // by event id
	byMon  map[string]int      // scan.completed events per monitor

	total, dups, bad atomic.Int64
	distinct         atomic.Int64
}

type received struct{ at, scheduled time.Time }

func newReceiver(secret string) *receiver {
	r := &receiver{secret: secret, events: map[string]received{}, byMon: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.srv.Config.ErrorLog = nil
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.total.Add(1)
	ev, err := webhook.Parse(r.secret, req.Header, body, at)
	if err != nil {
		r.bad.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if _, seen := r.events[ev.ID]; seen {
		r.dups.Add(1) // a retry of a delivery we answered: deduplicated, as receivers must
	} else {
		r.events[ev.ID] = received{at: at, scheduled: ev.Data.ScheduledFor}
		if ev.Type == webhook.EventScanCompleted {
			if r.byMon[ev.MonitorID]++; r.byMon[ev.MonitorID] == 1 {
				r.distinct.Add(1)
			}
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) monitors() int { return int(r.distinct.Load()) }

// snapshot is every event received so far and how many monitors they came from.
func (r *receiver) snapshot() ([]received, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]received, 0, len(r.events))
	for _, e := range r.events {
		out = append(out, e)
	}
	return out, len(r.byMon)
}

// verify reads back what the store recorded for every monitor the receiver
// heard from: one run each, no run error, its delivery marked delivered.
// The delivery's own record is written just after the receiver answers, so
// it is polled for with a deadline.
func verify(ms store.Monitors, r *receiver) string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.byMon))
	twice := 0
	for id, n := range r.byMon {
		ids = append(ids, id)
		if n > 1 {
			twice++
		}
	}
	r.mu.Unlock()
	ctx := context.Background()
	runs1, runErr := 0, 0
	for _, id := range ids {
		m, err := ms.Get(ctx, id)
		switch {
		case err != nil:
			runErr++
		case m.Run.Runs == 1 && m.Run.Error == "":
			runs1++
		default:
			runErr++
		}
	}
	delivered := 0
	deadline := time.Now().Add(30 * time.Second)
	pending := ids
	for len(pending) > 0 && time.Now().Before(deadline) {
		var still []string
		for _, id := range pending {
			ds, err := ms.Deliveries(ctx, id, 1)
			if err == nil && len(ds) == 1 && ds[0].Status == store.DeliveryDelivered {
				delivered++
			} else {
				still = append(still, id)
			}
		}
		if pending = still; len(pending) > 0 {
			time.Sleep(200 * time.Millisecond) // the last FinishAttempt writes are landing
		}
	}
	return fmt.Sprintf("store: %d monitors ran exactly once, %d otherwise; %d deliveries recorded delivered; %d monitors ran twice", runs1, runErr, delivered, twice)
}

// result is one interactive client's latencies.
type result struct {
	lat   []time.Duration
	errs  int
	fresh int // answers that were scanned for this request (X-Cache: MISS)
}

func (r result) String() string {
	if len(r.lat) == 0 {
		return fmt.Sprintf("no answers, %d errors", r.errs)
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%d scans, %d errors)", round(benchkit.Pct(r.lat, 0.5)), round(benchkit.Pct(r.lat, 0.99)), round(benchkit.Pct(r.lat, 1)), len(r.lat), r.errs)
}

// interactive asks for a fresh scan at most *rate times a second, one at a
// time (a slow answer delays the next request rather than piling up), until
// end or until stop is closed.
func interactive(target string, end time.Time, stop <-chan struct{}) result {
	client := &http.Client{Timeout: time.Minute}
	every := time.Duration(float64(time.Second) / *rate)
	var r result
	next := time.Now()
	for time.Now().Before(end) {
		if stop != nil {
			select {
			case <-stop:
				return r
			default:
			}
		}
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d): // pacing the request rate
			case <-stop:
				return r
			}
		}
		next = time.Now().Add(every)
		t0 := time.Now()
		resp, err := client.Get(target)
		if err != nil {
			r.errs++
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			r.errs++
			continue
		}
		r.lat = append(r.lat, time.Since(t0))
		if resp.Header.Get("X-Cache") == "MISS" {
			r.fresh++
		}
	}
	return r
}

// metric reads one counter from the origin's metrics (which it serves on a
// listener of their own, never beside the API).
func metric(srv *origin.Server, name string) int64 {
	w := httptest.NewRecorder()
	srv.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, l := range strings.Split(w.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writtenBytes is what this process has caused to be written to storage.
func writtenBytes() int64 {
	b, _ := os.ReadFile("/proc/self/io")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// machineCPU is the machine's busy and total CPU time so far, in clock ticks
// (/proc/stat): other processes share these cores.
func machineCPU() (busy, total float64) {
	b, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i := 1; i < len(f); i++ {
		v, _ := strconv.ParseFloat(f[i], 64)
		total += v
		if i != 4 && i != 5 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
