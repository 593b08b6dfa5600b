package monitorkill

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestEmbeddedKill9AndRestart kills one process on the embedded file with
// SIGKILL and restarts it on the same --data: what was acknowledged is
// there, and what was due is done.
func TestEmbeddedKill9AndRestart(t *testing.T) {
	bin := binary(t)
	began, used := time.Now(), cpuNow()
	data := t.TempDir()

	const (
		n       = 30
		cadence = 4 * time.Second
		lease   = 5 * time.Second
		// A delivery claim lasts 3 attempt timeouts + 5 s (monitor.Config.deliveryLease).
		deliveryLease = 3*time.Second + 5*time.Second
	)
	site := newSites(t, n+1, 300*time.Millisecond)
	// Deliveries are held 400 ms, so some are being sent when the kill lands.
	recv := newReceiver(t, 400*time.Millisecond)
	env := serveEnv(map[string]string{
		"AGENTREADY_MONITOR_MIN_CADENCE": "1s",
		"AGENTREADY_MONITOR_LEASE":       lease.String(),
		"AGENTREADY_MONITOR_POLL":        "100ms",
		// Retries outlast the failing phase below (about 44 s of them), so
		// every delivery is still pending, not failed, when the receiver heals.
		"AGENTREADY_WEBHOOK_RETRIES":      "300ms,500ms,1s,2s,3s,5s,8s,8s,8s,8s",
		"AGENTREADY_WEBHOOK_TIMEOUT":      "1s",
		"AGENTREADY_MONITOR_MAX_FAILURES": "100",
		"AGENTREADY_MONITORS_ANONYMOUS":   "1000",
	})

	// (a) A monitor answered 201 survives a kill -9 right after the answer.
	first := start(t, "first process", bin, env, "--data", data)
	created := createMonitor(t, first.URL, n, site.urls[n], recv.hook(n), "1h")
	first.kill9(t)
	second := start(t, "second process", bin, env, "--data", data)
	var got map[string]any
	if code := getJSON(t, second.URL+"/api/monitors/"+created.id, &got); code != 200 {
		t.Fatalf("GET the monitor created just before the kill: %d, want 200", code)
	}
	for _, k := range []string{"id", "url", "callback_url", "cadence", "interval_seconds", "events", "created_at", "bound_to_caller"} {
		if !reflect.DeepEqual(got[k], created.created[k]) {
			t.Errorf("after kill -9 and restart, %s is %v; the 201 said %v", k, got[k], created.created[k])
		}
	}
	// Its first run may be under way (running, next_run null) or done.
	if got["status"] != "active" || (got["next_run"] == nil) == (got["running"] != true) {
		t.Errorf("after kill -9 and restart the monitor is %v with next_run %v, running %v; want active, and either scheduled or running", got["status"], got["next_run"], got["running"])
	}
	t.Logf("(a) the monitor answered 201 and then killed is there after a restart (+%s)", time.Since(began).Round(time.Millisecond))

	// (b) Monitors running, the receiver failing: deliveries pile up pending.
	recv.status.Store(500)
	mons := createPaced(t, n, cadence, func(i int) (mon, error) {
		return postMonitor(second.URL, i, site.urls[i], recv.hook(i), cadence.String())
	})
	// Two runs' events per monitor, every attempt answered 500: the first
	// run's event is some retries in, the second's just begun.
	waitFor(t, "every monitor's receiver failed two events", 30*time.Second, func() (bool, string) {
		events := map[int]map[string]bool{}
		for _, r := range recv.snapshot() {
			if events[r.idx] == nil {
				events[r.idx] = map[string]bool{}
			}
			events[r.idx][r.ev.ID] = true
		}
		short := 0
		for i := range n {
			if len(events[i]) < 2 {
				short++
			}
		}
		return short == 0, fmt.Sprintf("%d monitors with fewer", short)
	})
	// Kill while a scan and deliveries are under way (two, so that one is
	// still being sent when the signal lands).
	waitFor(t, "a scan and two deliveries in flight", 20*time.Second, func() (bool, string) {
		s, d := len(site.inFlight(nil)), recv.inFlight()
		return s > 0 && d > 1, fmt.Sprintf("%d scans, %d deliveries", s, d)
	})
	kill := time.Now()
	second.kill9(t)
	killed := time.Now() // it may have started work until the signal landed
	// The receiver notes a cut delivery when it sees the hang-up, just after.
	waitFor(t, "the receiver sees the dead sender hang up", 5*time.Second, func() (bool, string) {
		return recv.inFlight() == 0, fmt.Sprintf("%d deliveries in flight", recv.inFlight())
	})
	before := recv.snapshot()
	recv.status.Store(200)
	third := start(t, "third process", bin, env, "--data", data)
	up := time.Now()
	downtime := up.Sub(kill)
	if downtime >= cadence {
		t.Fatalf("the restart took %s, not less than a cadence (%s): runs may then be coalesced, so the no-missed-run check does not apply", downtime, cadence)
	}
	failed := 0
	for _, r := range before {
		if r.status == 500 {
			failed++
		}
	}
	t.Logf("(b) killed at +%s after %d delivery attempts answered 500, restarted in %s",
		kill.Sub(began).Round(time.Millisecond), failed, downtime.Round(time.Millisecond))

	// Everything the receiver saw, and everything the store lists, must be
	// delivered now that the receiver answers 200.
	must := map[string]int{} // event id → monitor
	for _, r := range before {
		if r.idx >= 0 && r.idx < n {
			must[r.ev.ID] = r.idx
		}
	}
	listedOnly := 0
	for i := range n {
		var list struct {
			Deliveries []struct {
				ID      string    `json:"id"`
				Status  string    `json:"status"`
				Created time.Time `json:"created_at"`
			} `json:"deliveries"`
		}
		if code := getJSON(t, third.URL+"/api/monitors/"+mons[i].id+"/deliveries?limit=100", &list); code != 200 {
			t.Fatalf("GET monitor %d's deliveries: %d", i, code)
		}
		for _, d := range list.Deliveries {
			if _, ok := must[d.ID]; !ok && d.Created.Before(kill) {
				listedOnly++
			}
			must[d.ID] = i
			if d.Status == "failed" || d.Status == "canceled" {
				t.Errorf("monitor %d: delivery %s is %s after the restart; the receiver answered 500 for about ten seconds, well inside the retries", i, d.ID, d.Status)
			}
		}
	}
	delivered := func() map[string]time.Time {
		ok := map[string]time.Time{}
		for _, r := range recv.snapshot() {
			if r.status == 200 && !r.aborted {
				if at, seen := ok[r.ev.ID]; !seen || r.at.Before(at) {
					ok[r.ev.ID] = r.at
				}
			}
		}
		return ok
	}
	waitFor(t, "every pending delivery delivered after the restart", 40*time.Second, func() (bool, string) {
		ok := delivered()
		left := 0
		for id := range must {
			if _, done := ok[id]; !done {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d of %d not yet answered 200", left, len(must))
	})
	// A delivery the dead process was sending is due again at open, not
	// when its claim would have run out: no claim taken before the kill
	// could have lapsed before kill+deliveryLease-1s.
	ok := delivered()
	cut := 0
	for _, r := range before {
		if !r.aborted {
			continue
		}
		cut++
		if at := ok[r.ev.ID]; !at.Before(kill.Add(deliveryLease - time.Second)) {
			t.Errorf("delivery %s, being sent at the kill, was delivered %s after it: the dead process's claim was waited out, not released at open", r.ev.ID, at.Sub(kill).Round(time.Millisecond))
		}
	}
	if cut == 0 {
		t.Errorf("no delivery was cut by the kill, though one was in flight: the receiver did not see the sender hang up")
	}

	// The schedule goes on past the restart: two cadences of runs.
	mark := up.Add(2 * cadence)
	waitReported(t, recv, n, mark, 40*time.Second)
	third.stop(t)

	windowEnd := mark
	recs := recv.snapshot()
	scans := site.snapshot()
	p := &problems{errorf: t.Errorf}
	all := map[int]mon{n: created}
	for i, m := range mons {
		all[i] = m
	}
	verified := checkSignatures(p, all, recs)
	k := crash{
		inFlight: func(_ mon, s *slot) string {
			if s.scans[0].start.Before(killed) && s.created.After(kill) {
				return "kill"
			}
			return ""
		},
		// The restarted process makes the dead one's claims due at open
		// (between the kill and the first answer), and that time becomes the
		// run's due time.
		moved: func(_ mon, grid time.Time, s *slot) string {
			if !grid.After(killed) && !s.due.Before(kill) && !s.due.After(up) {
				return "kill"
			}
			return ""
		},
		redoFrom: func(*slot) time.Time { return kill },
	}
	var total runCount
	for i := range n {
		slots := slotsOf(p, mons[i], recs)
		attribute(slots, i, scans)
		total.add(checkRuns(p, mons[i], slots, cadence, windowEnd, k))
	}
	p.close()
	t.Logf("%d deliveries had to arrive (%d made before the kill but never attempted, known only from the store's list), all did; %d cut by the kill were delivered at once after the restart",
		len(must), listedOnly, cut)
	t.Logf("window: runs due up to +%s; %d runs checked, none missed (%d of them under a moved scheduled_for; %d after slots coalesced because the run before was more than a cadence late), each with one event id; %d deliveries verified (both signatures), %d attempts beyond each event's first",
		windowEnd.Sub(began).Round(time.Millisecond), total.runs, len(total.shifted), len(total.coalesced), verified, total.resent)
	t.Logf("crash window: %v; latest run finished %s after its slot", total.why, total.maxLate.Round(time.Millisecond))
	t.Logf("wall time %s; %s", time.Since(began).Round(time.Millisecond), used.since())
	failIfMoved(t, total, "the restart")
}
