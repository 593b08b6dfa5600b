package monitorkill

import (
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/webhook"
)

// TestCheckerCatches feeds the run checker made-up histories, so that what
// the process tests count is shown to catch each fault it looks for, and
// to let through only the crash windows it names.
func TestCheckerCatches(t *testing.T) {
	const (
		cadence = 5 * time.Second
		lease   = 3 * time.Second
	)
	t0 := time.UnixMilli(1_800_000_000_000).UTC()
	kill := t0.Add(12 * time.Second)
	m := mon{idx: 0, id: "mon_a", firstDue: t0}
	// run is one event of a run due at due, made done after it, delivered
	// with status, its scans begun at the given offsets from due.
	type run struct {
		due, done time.Duration
		id        string
		status    int
		scans     []time.Duration
	}
	k := crash{
		inFlight: func(_ mon, s *slot) string {
			if s.scans[0].start.Before(kill) && s.created.After(kill) {
				return "kill"
			}
			return ""
		},
		// As the Redis test has it: claimed within a lease before the kill.
		moved: func(_ mon, grid time.Time, s *slot) string {
			if c := s.due.Add(-lease); !c.Before(grid) && !c.Before(kill.Add(-lease)) && !c.After(kill) {
				return "kill"
			}
			return ""
		},
		redoFrom: func(s *slot) time.Time { return s.grid.Add(lease) },
	}
	check := func(runs []run, windowEnd time.Duration) ([]string, runCount) {
		var recs []receipt
		var scans []scanReq
		for _, r := range runs {
			due := t0.Add(r.due)
			ev := webhook.Event{ID: r.id, Type: webhook.EventScanCompleted, MonitorID: m.id, CreatedAt: due.Add(r.done), Data: webhook.Data{ScheduledFor: due}}
			recs = append(recs, receipt{idx: 0, status: r.status, ev: ev})
			for _, s := range r.scans {
				scans = append(scans, scanReq{idx: 0, start: due.Add(s)})
			}
		}
		var said []string
		p := &problems{errorf: func(format string, args ...any) { said = append(said, format) }}
		slots := slotsOf(p, m, recs)
		attribute(slots, 0, scans)
		c := checkRuns(p, m, slots, cadence, t0.Add(windowEnd), k)
		return said, c
	}
	ok := func(due time.Duration, id string) run {
		return run{due: due, done: time.Second, id: id, status: 200, scans: []time.Duration{100 * time.Millisecond}}
	}
	resend := func(due time.Duration, id string) run { return run{due: due, done: time.Second, id: id, status: 200} }
	cases := []struct {
		name      string
		runs      []run
		want      string // a fragment of the one problem expected; "" for none
		doubled   int
		shifted   int
		coalesced int
	}{
		{name: "every run once", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"), ok(10*time.Second, "e2")}},
		{name: "a run missed", runs: []run{ok(0, "e0"), ok(10*time.Second, "e2")}, want: "was missed"},
		{name: "the first run missed", runs: []run{ok(5*time.Second, "e1"), ok(10*time.Second, "e2")}, want: "is missing"},
		{name: "no run at the end of the window", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1")}, want: "no run reported after"},
		{name: "two events for one run", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"), resend(5*time.Second, "e1b"), ok(10*time.Second, "e2")}, want: "has two events"},
		{name: "re-sends of one event", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"), resend(5*time.Second, "e1"), ok(10*time.Second, "e2")}},
		{name: "never delivered", runs: []run{ok(0, "e0"), {due: 5 * time.Second, done: time.Second, id: "e1", status: 500, scans: []time.Duration{0}}, ok(10*time.Second, "e2")}, want: "never answered 2xx"},
		{name: "scanned twice outside a crash", runs: []run{ok(0, "e0"), {due: 5 * time.Second, done: time.Second, id: "e1", status: 200, scans: []time.Duration{0, 500 * time.Millisecond}}, ok(10*time.Second, "e2")}, want: "in no crash window"},
		{name: "reported without a scan", runs: []run{ok(0, "e0"), {due: 5 * time.Second, done: time.Second, id: "e1", status: 200}, ok(10*time.Second, "e2")}, want: "saw no scan"},
		{name: "held at the kill, redone after the lease", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"),
			{due: 10 * time.Second, done: 4 * time.Second, id: "e2", status: 200, scans: []time.Duration{100 * time.Millisecond, 3100 * time.Millisecond}}}, doubled: 1},
		{name: "held at the kill, redone before the lease", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"),
			{due: 10 * time.Second, done: 3 * time.Second, id: "e2", status: 200, scans: []time.Duration{100 * time.Millisecond, 2500 * time.Millisecond}}}, want: "before its claim could have ended", doubled: 1},
		{name: "held at the kill, reported at the lease's end", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"),
			{due: 10*time.Second + 100*time.Millisecond + lease, done: time.Second, id: "e2", status: 200, scans: []time.Duration{-lease, 100 * time.Millisecond}}}, doubled: 1, shifted: 1},
		{name: "moved, but not by the kill", runs: []run{ok(0, "e0"), ok(5*time.Second, "e1"), ok(11500*time.Millisecond, "e2")}, want: "was missed"},
		{name: "coalesced after a run more than a cadence late", runs: []run{
			{due: 0, done: 11 * time.Second, id: "e0", status: 200, scans: []time.Duration{10 * time.Second}},
			{due: 10 * time.Second, done: 2 * time.Second, id: "e2", status: 200, scans: []time.Duration{1100 * time.Millisecond}}}, coalesced: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			said, c := check(tc.runs, 14*time.Second)
			if tc.want == "" && len(said) > 0 {
				t.Errorf("want no problem, got %q", said)
			}
			if tc.want != "" && (len(said) != 1 || !strings.Contains(said[0], tc.want)) {
				t.Errorf("want one problem with %q, got %q", tc.want, said)
			}
			if len(c.doubled) != tc.doubled || len(c.shifted) != tc.shifted || len(c.coalesced) != tc.coalesced {
				t.Errorf("doubled %d, shifted %d, coalesced %d; want %d, %d, %d", len(c.doubled), len(c.shifted), len(c.coalesced), tc.doubled, tc.shifted, tc.coalesced)
			}
		})
	}
}
