package monitorkill

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

// redisDB is the database this test owns on the shared Redis. The origin
// processes use the store's fixed key prefix, so a fresh prefix per test is
// not possible; instead the test takes a database no other test uses and
// empties it first (FLUSHDB), so leftovers of an earlier run cannot be
// claimed as this run's work.
const redisDB = 11

// ownDB points raw at redisDB and empties it.
func ownDB(t *testing.T, raw string) string {
	t.Helper()
	// Neither parser's message is shown: it may quote the password.
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal("REDIS_URL is not a URL; want redis://[user:password@]host:port/db")
	}
	u.Path = "/" + strconv.Itoa(redisDB)
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("REDIS_URL with database %d is not a redis:// URL go-redis accepts", redisDB)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("FLUSHDB on database %d of REDIS_URL: %v", redisDB, err)
	}
	return u.String()
}

// emptyCluster deletes the keys the origins will use (the store's fixed
// prefix) on every node of the Cluster at raw: a Cluster has no database
// of its own to give a test, and other tests' keys there have prefixes of
// their own.
func emptyCluster(t *testing.T, raw string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := store.OpenRedis(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Cluster() {
		t.Fatal("REDIS_CLUSTER_URL is not a Redis Cluster")
	}
	if err := r.DeleteAll(ctx); err != nil {
		t.Fatalf("emptying the Cluster of earlier runs' keys: %v", err)
	}
	return raw
}

// TestThreeOriginsOneRedisKill9 runs 200 monitors on three origin processes
// sharing one Redis, kills one with SIGKILL while it holds scans, and counts
// what the fixture sites and the receiver saw.
func TestThreeOriginsOneRedisKill9(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells which origin holds a scan by reading /proc (Linux only)")
	}
	testThreeOriginsKill9(t, ownDB(t, testenv.RedisURL(t)))
}

// TestThreeOriginsRedisClusterKill9 is the same on a Redis Cluster of three
// masters: the monitors' keys spread over its nodes, every claim and commit
// on one node.
func TestThreeOriginsRedisClusterKill9(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells which origin holds a scan by reading /proc (Linux only)")
	}
	testThreeOriginsKill9(t, emptyCluster(t, testenv.RedisClusterURL(t)))
}

func testThreeOriginsKill9(t *testing.T, redisURL string) {
	bin := binary(t)
	began, used := time.Now(), cpuNow()

	const (
		n       = 200
		cadence = 5 * time.Second
		// Longer than a scan takes on a busy 2-core machine (the homepage
		// alone is held 1 s): a scan outlasting its lease is done twice.
		lease   = 5 * time.Second
		workers = 32
		// A delivery claim lasts 3 attempt timeouts + 5 s (monitor.Config.deliveryLease).
		deliveryLease = 3*time.Second + 5*time.Second
	)
	// The homepage is held 1 s: about 40 scans are in flight at any time
	// (200 monitors every 5 s), so the kill lands in the middle of some.
	site := newSites(t, n, time.Second)
	// Deliveries take 100 ms, so some are in flight at the kill too.
	recv := newReceiver(t, 100*time.Millisecond)
	env := serveEnv(map[string]string{
		"REDIS_URL":                      redisURL,
		"AGENTREADY_MONITOR_MIN_CADENCE": "1s",
		"AGENTREADY_MONITOR_LEASE":       lease.String(),
		"AGENTREADY_MONITOR_POLL":        "100ms",
		"AGENTREADY_MONITOR_WORKERS":     strconv.Itoa(workers),
		"AGENTREADY_WEBHOOK_RETRIES":     "300ms,500ms,1s,2s",
		"AGENTREADY_WEBHOOK_TIMEOUT":     "1s",
		"AGENTREADY_MONITORS_ANONYMOUS":  "1000",
	})
	var origins []*proc
	for i := range 3 {
		origins = append(origins, launch(t, fmt.Sprintf("origin %d", i), bin, env, "--data", t.TempDir()))
	}
	for _, o := range origins {
		o.ready(t)
	}
	t.Logf("3 origins up after %s", time.Since(began).Round(time.Millisecond))

	// Created one every cadence/n, round robin, so that runs fall evenly
	// over the cadence and every origin takes creations; a few at once, so
	// that a slow answer does not bunch the rest.
	mons := createPaced(t, n, cadence, func(i int) (mon, error) {
		return postMonitor(origins[i%3].URL, i, site.urls[i], recv.hook(i), cadence.String())
	})
	t.Logf("%d monitors created at +%s", n, time.Since(began).Round(time.Millisecond))

	// Steady state: every monitor has reported two runs.
	waitFor(t, "every monitor reports 2 runs", 40*time.Second, func() (bool, string) {
		runs := map[int]map[int64]bool{}
		for _, r := range recv.snapshot() {
			if runs[r.idx] == nil {
				runs[r.idx] = map[int64]bool{}
			}
			runs[r.idx][r.ev.Data.ScheduledFor.UnixMilli()] = true
		}
		short := 0
		for i := range n {
			if len(runs[i]) < 2 {
				short++
			}
		}
		return short == 0, fmt.Sprintf("%d monitors have fewer", short)
	})
	t.Logf("every monitor reported 2 runs at +%s", time.Since(began).Round(time.Millisecond))

	// Kill the origin scanning the most sites, once that is 3 or more:
	// origins that are busy claim again as each run ends, so the work is
	// not spread evenly, and a fixed victim may hold nothing.
	var (
		victim *proc
		held   []scanReq
	)
	pids := make([]int, len(origins))
	for i, o := range origins {
		pids[i] = o.cmd.Process.Pid
	}
	var readFor time.Duration
	waitFor(t, "an origin holds 3 scans in flight", 20*time.Second, func() (bool, string) {
		// The homepages in flight first, then whose connections they are: a
		// scan keeps its connections open until it ends, so one found open
		// is a scan still under way, however long reading /proc took.
		before := site.inFlight(nil)
		readAt := time.Now()
		owned, err := connsOf(pids...)
		if err != nil {
			t.Fatalf("reading the origins' sockets: %v", err)
		}
		readFor = time.Since(readAt)
		counts := make([]int, len(origins))
		victim, held = nil, nil
		for i, o := range origins {
			var mine []scanReq
			for _, sr := range before {
				if owned[pids[i]][sr.conn] {
					mine = append(mine, sr)
				}
			}
			counts[i] = len(mine)
			if len(mine) > len(held) {
				victim, held = o, mine
			}
		}
		return len(held) >= 3, fmt.Sprintf("scans in flight per origin: %v of %d (reading /proc took %s)", counts, len(before), readFor.Round(time.Millisecond))
	})
	kill := time.Now()
	victim.kill9(t)
	killed := time.Now() // it may have started work until the signal landed
	t.Logf("killed %s at +%s while it scanned %d sites (seen %s before)", victim.name, kill.Sub(began).Round(time.Millisecond), len(held), readFor.Round(time.Millisecond))

	// Run on for 2 leases + 2 cadences, and past a delivery lease, so the
	// survivors take over its runs and its deliveries, until every run due
	// by then is reported.
	mark := kill.Add(2*lease + 2*cadence)
	if m := kill.Add(deliveryLease + cadence); m.After(mark) {
		mark = m
	}
	waitReported(t, recv, n, mark, 90*time.Second)
	stopAt := time.Now()
	t.Logf("every monitor reported its runs through +%s at +%s; stopping the survivors", mark.Sub(began).Round(time.Millisecond), stopAt.Sub(began).Round(time.Millisecond))
	for _, o := range origins {
		if o != victim {
			o.stop(t)
		}
	}

	// Count over the runs due up to the mark: later ones may still have
	// been in flight.
	windowEnd := mark
	recs := recv.snapshot()
	scans := site.snapshot()
	p := &problems{errorf: t.Errorf}
	verified := checkSignatures(p, mons, recs)
	// Seconds in which an origin's store calls failed (Redis did not answer
	// in time, as on a starved machine): runs then are handed back or redone
	// when their lease ends, by design. A healthy run has none, and then
	// only the kill explains a second scan or a moved run.
	var failures []time.Time
	for _, o := range origins {
		failures = append(failures, storeFailures(o.out.String())...)
	}
	sort.Slice(failures, func(i, j int) bool { return failures[i].Before(failures[j]) })
	k := crash{
		inFlight: func(_ mon, s *slot) string {
			// killed, not kill: the victim may start a scan while the signal
			// is on its way.
			if s.scans[0].start.Before(killed) && s.created.After(kill) {
				return "kill"
			}
			for _, w := range failures {
				if s.scans[0].start.Before(w.Add(time.Second)) && s.created.After(w) {
					return "store failure"
				}
			}
			return ""
		},
		// A run claimed at c (at its slot or later) by an origin that then
		// died, or whose store calls then failed, is claimed again when the
		// lease ends, with that lease's end, c+lease, as its due time.
		moved: func(_ mon, grid time.Time, s *slot) string {
			c := s.due.Add(-lease)
			if c.Before(grid) {
				return ""
			}
			if !c.Before(kill.Add(-lease)) && !c.After(killed) {
				return "kill"
			}
			for _, w := range failures {
				if !c.Before(w.Add(-lease)) && c.Before(w.Add(time.Second)) {
					return "store failure"
				}
			}
			return ""
		},
		// Claimed at its slot or later, so not free before slot+lease.
		redoFrom: func(s *slot) time.Time { return s.grid.Add(lease) },
	}
	var total runCount
	slotsByMon := map[int][]*slot{}
	for i := range n {
		slots := slotsOf(p, mons[i], recs)
		attribute(slots, i, scans)
		slotsByMon[i] = slots
		total.add(checkRuns(p, mons[i], slots, cadence, windowEnd, k))
	}
	if n := total.why["scanned twice in a kill"]; n > workers {
		p.add("%d runs in flight at the kill were scanned twice; %s could hold at most %d", n, victim.name, workers)
	}

	// Takeover: each homepage fetch cut by the kill belongs to a run that a
	// survivor finished, and not before the dead origin's lease ran out.
	doubled := map[string]bool{}
	for _, s := range total.doubled {
		doubled[s.id] = true
	}
	takenOver := 0
	for _, sc := range scans {
		if !sc.aborted || !sc.start.Before(killed) || sc.end.After(stopAt) {
			continue
		}
		var run *slot
		for _, s := range slotsByMon[sc.idx] {
			for _, x := range s.scans {
				if x.start.Equal(sc.start) && x.conn == sc.conn {
					run = s
				}
			}
		}
		switch {
		case run == nil:
			p.add("monitor %d: a scan cut by the kill (begun %s) belongs to no reported run: its run was never finished", sc.idx, sc.start.Format(time.StampMilli))
		case !doubled[run.id]:
			p.add("monitor %d: the run due %s was cut by the kill but not scanned again", sc.idx, run.grid.Format(time.StampMilli))
		case run.created.Sub(run.grid) < lease:
			p.add("monitor %d: the run due %s, cut by the kill, was finished %s after it was due, sooner than its %s lease allows", sc.idx, run.grid.Format(time.StampMilli), run.created.Sub(run.grid), lease)
		default:
			takenOver++
		}
	}
	heldCut := 0
	for _, h := range held {
		for _, sc := range scans {
			if sc.start.Equal(h.start) && sc.conn == h.conn && sc.aborted {
				heldCut++
			}
		}
	}
	if total.why["scanned twice in a kill"] == 0 {
		p.add("no run the killed origin was scanning was scanned again by a survivor (%s was scanning %d sites just before the kill)", victim.name, len(held))
	}
	p.close()
	if len(failures) > 0 {
		t.Logf("the origins logged %d failed store calls (Redis did not answer within the store's 500 ms, or the breaker was open), from %s to %s: runs then are handed back or redone by design, so runs scanned twice or moved around then are counted as in a \"store failure\" window",
			len(failures), failures[0].Format(time.TimeOnly), failures[len(failures)-1].Format(time.TimeOnly))
	}
	t.Logf("window: runs due up to %s (+%s); %d runs checked, none missed (%d of them under a moved scheduled_for; %d after slots coalesced because the run before was more than a cadence late), each with one event id; %d deliveries verified (both signatures), %d re-sends of an event already delivered",
		windowEnd.Format(time.StampMilli), windowEnd.Sub(began).Round(time.Millisecond), total.runs, len(total.shifted), len(total.coalesced), verified, total.resent)
	t.Logf("crash windows: %v; each scanned again only after its lease; %d cut mid-homepage by the kill (%d of the %d seen on %s just before it); latest run finished %s after its slot",
		total.why, takenOver, heldCut, len(held), victim.name, total.maxLate.Round(time.Millisecond))
	t.Logf("wall time %s; %s", time.Since(began).Round(time.Millisecond), used.since())
	failIfMoved(t, total, "its lease's end")
}
