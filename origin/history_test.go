package origin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/webhook"
)

// changingSite serves a copy of testdata/sites/partial that the test edits
// between scans; change makes the edit: llms.txt gains its title (1.1 goes
// from partial to pass) and robots.txt goes away (its Content-Signal
// records with it: 1.15 goes from partial to fail; 4.2 fails as before,
// with another message).
func changingSite(t *testing.T) (s *fixture.Site, change func()) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "partial")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "sites", "partial"))); err != nil {
		t.Fatal(err)
	}
	s, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, func() {
		llms := filepath.Join(dir, "llms.txt")
		b, err := os.ReadFile(llms)
		if err != nil {
			t.Fatal(err)
		}
		// Written aside and renamed: a scan sees the old file or the new.
		if err := os.WriteFile(llms+".new", append([]byte("# "), b...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(llms+".new", llms); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "robots.txt")); err != nil {
			t.Fatal(err)
		}
	}
}

// expectedChanges is what report.Compare must find between two full
// reports, worked out from them directly: id → the list it belongs in.
func expectedChanges(before, now *report.Result) map[string]string {
	want := map[string]string{}
	for _, c := range now.Checks {
		was, ok := before.Check(c.ID)
		switch {
		case !ok || (was.Status == c.Status && was.Message == c.Message):
		case c.Status == report.Pass && was.Status != report.Pass:
			want[c.ID] = "newlyPassing:" + string(was.Status)
		case c.Status == report.Fail && was.Status != report.Fail:
			want[c.ID] = "newlyFailing:" + string(was.Status)
		default:
			want[c.ID] = "changed:" + string(was.Status)
		}
	}
	return want
}

// listed is the same map read from a report's previous, checking each
// entry's name, statuses and message against now and the lists' order.
func listed(t *testing.T, p *report.Previous, now *report.Result) map[string]string {
	t.Helper()
	got := map[string]string{}
	for name, cs := range map[string][]report.Change{"newlyPassing": p.NewlyPassing, "newlyFailing": p.NewlyFailing, "changed": p.Changed} {
		if cs == nil {
			t.Errorf("previous.%s is absent, want a list", name)
		}
		last := -1
		for _, c := range cs {
			i := slices.IndexFunc(now.Checks, func(k report.Check) bool { return k.ID == c.ID })
			if i <= last {
				t.Errorf("previous.%s is not in catalog order at %s", name, c.ID)
			}
			last = i
			if i < 0 || now.Checks[i].Name != c.Name || now.Checks[i].Status != c.To || now.Checks[i].Message != c.Message {
				t.Errorf("previous.%s: %+v is not the check as it is now", name, c)
			}
			got[c.ID] = name + ":" + string(c.From)
		}
	}
	return got
}

// editSeen: changes holds what changingSite's edit makes, one change of
// each kind at least.
func editSeen(changes map[string]string) bool {
	return changes["1.1"] == "newlyPassing:partial" && changes["1.15"] == "newlyFailing:partial" && changes["4.2"] == "changed:fail"
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// cachedReport is /api/report's answer.
type cachedReport struct {
	report.Result
	History []struct {
		Timestamp time.Time `json:"timestamp"`
		Score     int       `json:"score"`
		Grade     string    `json:"grade"`
		Level     int       `json:"level"`
	} `json:"history"`
	Plan json.RawMessage `json:"plan"`
}

// Two scans of a site whose files change in between, both through the
// origin: the second report says what changed (the JSON answer, and the
// stream's scan.completed, byte for byte), and /api/report answers the
// report with the site's history, ending with it, and the plan
// `agentready scan --recommend --json` prints for it. On every backend.
func TestReportSaysWhatChanged(t *testing.T) {
	for name, open := range stateBackends(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			if r, ok := st.(*store.Redis); ok {
				t.Cleanup(func() { r.DeleteAll(context.Background()) })
			}
			o := startOrigin(t, origin.Config{}, st)
			s, change := changingSite(t)
			q := url.QueryEscape(s.URL)

			var first report.Result
			resp, b := get(t, o.URL+"/api/scan?format=json&url="+q)
			if resp.StatusCode != 200 || json.Unmarshal(b, &first) != nil {
				t.Fatalf("first scan: %d %.300s", resp.StatusCode, b)
			}
			if first.Previous != nil || bytes.Contains(b, []byte(`"previous"`)) {
				t.Errorf("the first scan of a site has a previous: %+v", first.Previous)
			}
			var page cachedReport
			resp, b = get(t, o.URL+"/api/report?url="+q)
			if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil || len(page.History) != 1 || !page.History[0].Timestamp.Equal(first.Timestamp) || page.History[0].Score != first.Score.Value {
				t.Fatalf("/api/report after one scan: %d, history %+v", resp.StatusCode, page.History)
			}

			change()
			var second report.Result
			resp, raw := get(t, o.URL+"/api/scan?format=json&fresh=1&url="+q)
			if resp.StatusCode != 200 || json.Unmarshal(raw, &second) != nil {
				t.Fatalf("second scan: %d %.300s", resp.StatusCode, raw)
			}
			p := second.Previous
			if p == nil {
				t.Fatal("the second scan has no previous")
			}
			if !p.Timestamp.Equal(first.Timestamp) || p.Score != first.Score.Value || p.Grade != first.Score.Grade || p.Level != first.CurrentLevel || p.LevelName != first.Score.LevelName {
				t.Errorf("previous %+v is not the first scan (%s, %d %s, level %d %s)", p, first.Timestamp, first.Score.Value, first.Score.Grade, first.CurrentLevel, first.Score.LevelName)
			}
			want, got := expectedChanges(&first, &second), listed(t, p, &second)
			if !sameMap(got, want) {
				t.Errorf("previous lists %v, want %v", got, want)
			}
			if !editSeen(want) {
				t.Errorf("the edit did not pass 1.1, fail 1.15 and change 4.2's message: %v", want)
			}
			// The stream of the cached report ends with the same bytes.
			evs := readStream(t, o.URL+"/api/scan?url="+q)
			if last := evs[len(evs)-1]; last.Name != "scan.completed" || last.Data != string(raw) {
				t.Errorf("the stream's scan.completed differs from the JSON answer: %.200s", last.Data)
			}

			resp, b = get(t, o.URL+"/api/report?url="+q)
			page = cachedReport{}
			if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
				t.Fatalf("/api/report: %d %.300s", resp.StatusCode, b)
			}
			if len(page.History) != 2 || !page.History[0].Timestamp.Equal(first.Timestamp) || page.History[0].Score != first.Score.Value || page.History[0].Grade != first.Score.Grade || page.History[0].Level != first.CurrentLevel ||
				!page.History[1].Timestamp.Equal(second.Timestamp) || page.History[1].Score != second.Score.Value || page.History[1].Level != second.CurrentLevel {
				t.Errorf("history %+v, want the first scan then the second", page.History)
			}
			if page.Previous == nil || !sameMap(listed(t, page.Previous, &page.Result), want) {
				t.Errorf("/api/report's previous: %+v", page.Previous)
			}
			// The plan is engine/advice's for the very report served, which is
			// what `agentready scan --recommend --json` prints for it.
			var served report.Result
			if err := json.Unmarshal(b, &served); err != nil {
				t.Fatal(err)
			}
			plan, _ := json.Marshal(advice.For(&served))
			if !jsonEqual(string(plan), string(page.Plan)) {
				t.Errorf("the plan is not engine/advice's for the report:\n got %s\nwant %s", page.Plan, plan)
			}
			var steps struct {
				TargetLevel     int `json:"targetLevel"`
				Recommendations []struct {
					ID, Snippet string
				} `json:"recommendations"`
			}
			json.Unmarshal(page.Plan, &steps)
			if len(steps.Recommendations) == 0 || steps.TargetLevel == 0 {
				t.Errorf("a partial site's plan: %s", page.Plan)
			}
			for _, st := range steps.Recommendations {
				if strings.Contains(st.Snippet, "{") && (strings.Contains(st.Snippet, "{origin}") || strings.Contains(st.Snippet, "{name}")) {
					t.Errorf("%s: the starter is not filled in for the site: %q", st.ID, st.Snippet)
				}
			}
			// The history holds the scans, not the answers: a cached answer
			// adds no point.
			get(t, o.URL+"/api/scan?format=json&url="+q)
			if _, b = get(t, o.URL+"/api/report?url="+q); json.Unmarshal(b, &page) != nil || len(page.History) != 2 {
				t.Errorf("after a cached answer: %d points", len(page.History))
			}
		})
	}
}

// A monitor of a site whose files change between runs: each event's
// previous is the monitor's run before, and its lists are what changed
// between the two runs' reports (fetched from report_url); scan.completed
// and score.changed of one run carry the same previous.
func TestMonitorEventsSayWhatChanged(t *testing.T) {
	o := startOrigin(t, origin.Config{Monitors: fastMonitors()}, nil)
	s, change := changingSite(t)
	recv := newReceiver(t)
	status, m, _ := createMonitor(t, o, `{"url":"`+s.URL+`","callback_url":"`+recv.srv.URL+`/w","cadence":"500ms"}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	completed := func(r received) bool { return r.event.Type == webhook.EventScanCompleted && !r.event.Test }
	testenv.Eventually(t, 15*time.Second, "the baseline run", func() bool { return len(recv.find("/w", completed)) >= 1 })
	change()
	changed := func(r received) bool { return r.event.Type == webhook.EventScoreChanged }
	testenv.Eventually(t, 15*time.Second, "score.changed after the edit", func() bool { return len(recv.find("/w", changed)) >= 1 })
	n := len(recv.find("/w", completed))
	testenv.Eventually(t, 15*time.Second, "two runs after the change", func() bool { return len(recv.find("/w", completed)) >= n+2 })

	reportOf := func(ev webhook.Event) *report.Result {
		t.Helper()
		resp, b := get(t, ev.Data.ReportURL)
		var r report.Result
		if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil {
			t.Fatalf("report_url of %s: %d", ev.ID, resp.StatusCode)
		}
		return &r
	}
	runs := recv.find("/w", completed)
	slices.SortFunc(runs, func(a, b received) int { return a.event.Data.ScheduledFor.Compare(b.event.Data.ScheduledFor) })
	if runs[0].event.Data.Previous != nil {
		t.Errorf("the baseline run has a previous: %+v", runs[0].event.Data.Previous)
	}
	// A run may straddle the edit's two files: each file's effect is seen
	// by one run, not necessarily the same.
	sawLLMs, sawRobots := false, false
	for i := 1; i < len(runs); i++ {
		before, now := reportOf(runs[i-1].event), reportOf(runs[i].event)
		p, pd := runs[i].event.Data.Previous, runs[i-1].event.Data
		if p == nil {
			t.Fatalf("run %d has no previous", i)
		}
		if p.Score != pd.Score || p.Level != pd.Level || p.Grade != pd.Grade || p.LevelName != pd.LevelName || !p.Timestamp.Equal(before.Timestamp) {
			t.Errorf("run %d: previous %+v is not run %d (%+v, scanned %s)", i, p, i-1, pd, before.Timestamp)
		}
		got := map[string]string{}
		for list, cs := range map[string][]webhook.Change{"newlyPassing": p.NewlyPassing, "newlyFailing": p.NewlyFailing, "changed": p.Changed} {
			if cs == nil {
				t.Errorf("run %d: previous.%s is null", i, list)
			}
			for _, c := range cs {
				if k, _ := now.Check(c.ID); k.Name != c.Name || string(k.Status) != c.To || k.Message != c.Message {
					t.Errorf("run %d: %+v is not the check as it is now", i, c)
				}
				got[c.ID] = list + ":" + c.From
			}
		}
		want := expectedChanges(before, now)
		if !sameMap(got, want) {
			t.Errorf("run %d: previous lists %v, want %v", i, got, want)
		}
		sawLLMs = sawLLMs || want["1.1"] == "newlyPassing:partial"
		sawRobots = sawRobots || (want["1.15"] == "newlyFailing:partial" && want["4.2"] == "changed:fail")
		// The run's score.changed, if it sent one, says the same.
		for _, c := range recv.find("/w", changed) {
			if c.event.Data.ReportURL == runs[i].event.Data.ReportURL {
				a, _ := json.Marshal(c.event.Data.Previous)
				b, _ := json.Marshal(p)
				if !bytes.Equal(a, b) {
					t.Errorf("run %d: score.changed's previous %s, scan.completed's %s", i, a, b)
				}
			}
		}
	}
	if !sawLLMs || !sawRobots {
		t.Errorf("no run saw the edit of llms.txt (1.1 newly passing: %v) or of robots.txt (1.15 newly failing, 4.2 changed: %v)", sawLLMs, sawRobots)
	}
}
