package stack_test

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// reportEnv gives anonymous callers enough scans for a site's history.
func reportEnv(k string) string {
	return map[string]string{"AGENTREADY_FREE_DAILY": "20", "AGENTREADY_TOKEN_KEYS": edgetest.TokenKeys}[k]
}

// siteCopy copies testdata/sites/<name> to a directory of its own, so a
// test can change the site's files between two scans.
func siteCopy(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "sites", name)
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// servedReport is /api/report as the edge reads it: the report, the site's
// history and engine/advice's plan.
type servedReport struct {
	report.Result
	History []struct {
		Timestamp time.Time `json:"timestamp"`
		Score     int       `json:"score"`
		Grade     string    `json:"grade"`
		Level     int       `json:"level"`
	} `json:"history"`
	Plan *advice.Plan `json:"plan"`
}

func readReport(t *testing.T, svc *stack.Stack, site string) servedReport {
	t.Helper()
	resp, b := testenv.Get(t, svc.URL+"/api/report?url="+url.QueryEscape(site))
	var r servedReport
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Checks) != 48 {
		t.Fatalf("/api/report: %d %.300s", resp.StatusCode, b)
	}
	return r
}

func scanSite(t *testing.T, svc *stack.Stack, site string, fresh bool) report.Result {
	t.Helper()
	q := "/api/scan?format=json&url=" + url.QueryEscape(site)
	if fresh {
		q += "&fresh=1"
	}
	resp, b := testenv.Get(t, svc.URL+q)
	var r report.Result
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Checks) != 48 {
		t.Fatalf("scan: %d %.300s", resp.StatusCode, b)
	}
	return r
}

// nextSecond returns once the clock is past t's second: reports are stamped
// in whole seconds, and two scans of one second are one point of history.
func nextSecond(t *testing.T, ts time.Time) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Unix() <= ts.Unix(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not move past the scan's second")
		}
	}
}

// wantDiff is what changed between two reports, by the documented rules of
// `previous`: newly passing (pass now, not before), newly failing (fail now,
// not before), changed (any other change of status or message).
func wantDiff(before, after report.Result) []string {
	var out []string
	for _, group := range []string{"passing", "failing", "changed"} {
		for _, c := range after.Checks {
			p, _ := before.Check(c.ID)
			kind := ""
			switch {
			case c.Status == report.Pass && p.Status != report.Pass:
				kind = "passing"
			case c.Status == report.Fail && p.Status != report.Fail:
				kind = "failing"
			case c.Status != p.Status || c.Message != p.Message:
				kind = "changed"
			}
			if kind == group {
				out = append(out, kind+" "+c.ID)
			}
		}
	}
	return out
}

var (
	diffRe  = regexp.MustCompile(`<li class="[a-z]+" data-change="([a-z]+)"><span class="st" aria-hidden="true">[^<]*</span> <span class="sw">[^<]*</span> <a href="#check-([0-9.]+)">`)
	pointRe = regexp.MustCompile(`<circle cx="[0-9.]+" cy="[0-9.]+" r="4"><title>([^<]+)</title></circle>`)
	stepRe  = regexp.MustCompile(`<li class="step [a-z]+" data-id="([0-9.]+)">`)
)

// The history of a site on its report: two scans of a fixture whose files
// change in between (llms.txt is published after the first) give the page a
// sparkline of two points and the diff the two JSON reports imply, on the
// page and in its markdown twin; the page's Fix next is the first steps of
// engine/advice's plan for the same report, as /api/report sends it.
func TestReportPageHistory(t *testing.T) {
	svc := start(t, stack.Options{Env: reportEnv})
	dir := siteCopy(t, "peer")
	llms, err := os.ReadFile(filepath.Join(dir, "llms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "llms.txt"))
	s, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)

	first := scanSite(t, svc, s.URL, false)
	if c, _ := first.Check("1.1"); c.Status == report.Pass {
		t.Fatalf("without llms.txt, 1.1 passes: %s", c.Message)
	}
	if r := readReport(t, svc, s.URL); r.Previous != nil || len(r.History) != 1 {
		t.Errorf("a first scan has a previous scan (%v) or %d points of history", r.Previous, len(r.History))
	}
	if err := os.WriteFile(filepath.Join(dir, "llms.txt"), llms, 0o644); err != nil {
		t.Fatal(err)
	}
	nextSecond(t, first.Timestamp)
	second := scanSite(t, svc, s.URL, true)
	want := wantDiff(first, second)
	if !slices.Contains(want, "passing 1.1") {
		t.Fatalf("publishing llms.txt did not make 1.1 pass: %v", want)
	}
	served := readReport(t, svc, s.URL)
	if len(served.History) != 2 || served.Previous == nil || served.Plan == nil {
		t.Fatalf("/api/report after two scans: %d points, previous %v, plan %v", len(served.History), served.Previous != nil, served.Plan != nil)
	}

	q := url.QueryEscape(s.URL)
	_, page := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/html")
	var got []string
	for _, m := range diffRe.FindAllSubmatch(page, -1) {
		got = append(got, string(m[1])+" "+string(m[2]))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the page's diff is %v; the two reports differ by %v", got, want)
	}
	t.Logf("the diff: %v; Fix next: %s", want, stepRe.FindAll(page, -1))
	points := pointRe.FindAllSubmatch(page, -1)
	if len(points) != 2 {
		t.Fatalf("%d points in the sparkline, want 2", len(points))
	}
	for i, r := range []report.Result{first, second} {
		title := r.Timestamp.UTC().Format("2 Jan 2006 15:04 UTC") + ": " + strconv.Itoa(r.Score.Value) + " (" + r.Score.Grade + ")"
		listed := `<time datetime="` + r.Timestamp.UTC().Format(time.RFC3339) + `">`
		if string(points[i][1]) != title || bytes.Count(page, []byte(listed)) < 2 {
			t.Errorf("scan %d: point titled %q (want %q), its date in text %d times", i+1, points[i][1], title, bytes.Count(page, []byte(listed)))
		}
	}

	_, md := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/markdown")
	if !bytes.Contains(md, []byte("## Since the last scan")) || !bytes.Contains(md, []byte("scored "+strconv.Itoa(first.Score.Value))) {
		t.Errorf("the markdown twin does not compare with the previous scan: %.2000s", md)
	}
	words := map[string]string{"passing": "Newly passing", "failing": "Newly failing", "changed": "Changed"}
	for _, d := range want {
		kind, id, _ := strings.Cut(d, " ")
		if !bytes.Contains(md, []byte("- "+words[kind]+": **"+id+" ")) {
			t.Errorf("the markdown twin lacks %s", d)
		}
	}
	for _, r := range []report.Result{first, second} {
		if !bytes.Contains(md, []byte("- "+r.Timestamp.UTC().Format(time.RFC3339)+": "+strconv.Itoa(r.Score.Value)+" (grade "+r.Score.Grade)) {
			t.Errorf("the markdown twin's history lacks the scan of %s", r.Timestamp)
		}
	}

	// Fix next is the plan /api/report sends, which is engine/advice's for
	// the same report (the CLI's --recommend --json and the MCP tool's).
	plan := advice.For(&served.Result)
	var ids, planIDs []string
	for _, m := range stepRe.FindAllSubmatch(page, -1) {
		ids = append(ids, string(m[1]))
	}
	for i, st := range served.Plan.Steps {
		if i < 3 {
			planIDs = append(planIDs, st.ID)
		}
		if st.ID != plan.Steps[i].ID || st.Snippet != plan.Steps[i].Snippet {
			t.Errorf("/api/report's plan step %d is %s, engine/advice's %s", i+1, st.ID, plan.Steps[i].ID)
		}
	}
	if len(ids) == 0 || !slices.Equal(ids, planIDs) {
		t.Errorf("Fix next lists %v, the plan begins %v", ids, planIDs)
	}
	for _, st := range served.Plan.Steps[:len(ids)] {
		if st.Snippet != "" && !bytes.Contains(page, []byte("<code>"+html.EscapeString(st.Snippet)+"</code></pre><button")) {
			t.Errorf("Fix next does not show the starter of %s", st.ID)
		}
	}
	if !bytes.Contains(md, []byte("## Fix next")) || !bytes.Contains(md, []byte("1. **"+planIDs[0]+" ")) {
		t.Errorf("the markdown twin has no fix list: %.1500s", md)
	}
}
