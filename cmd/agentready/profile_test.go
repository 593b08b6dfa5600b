package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

func scanJSON(t *testing.T, args ...string) *report.Result {
	t.Helper()
	code, out, stderr := runCLI(append([]string{"scan", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("scan %v: exit %d: %s", args, code, stderr)
	}
	var r report.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("scan %v: %v", args, err)
	}
	return &r
}

// --profile judges the report as another kind; --pages sets the read
// suite's sample (0 turns it off); the text output shows the profile, the
// read suite and the findings across checks.
func TestScanProfileAndPages(t *testing.T) {
	url := site(t, "full")
	own := scanJSON(t, url)
	if own.Read == nil || len(own.Read.Checks) != len(checks.Read()) || own.Read.Limit != gather.DefaultReadPages || own.Profile == nil || own.Profile.Source == "requested" {
		t.Fatalf("scan --json: read %+v, profile %+v", own.Read, own.Profile)
	}
	as := "commerce"
	if own.Profile.ID == as {
		as = "docs"
	}
	r := scanJSON(t, "--profile", as, url)
	if r.Profile == nil || r.Profile.ID != as || r.Profile.Source != "requested" || r.Score != own.Score {
		t.Errorf("--profile %s: %+v (score %v, was %v)", as, r.Profile, r.Score, own.Score)
	}
	// Off, the suite reads no page: every read check is not applicable.
	if r := scanJSON(t, "--pages", "0", url); r.Read != nil && (len(r.Read.Pages) > 0 || r.Read.Score.NA != r.Read.Score.Total) {
		t.Errorf("--pages 0 still ran the read suite: %d pages, score %+v", len(r.Read.Pages), r.Read.Score)
	}
	if r := scanJSON(t, "--pages", "2", url); r.Read == nil || r.Read.Limit != 2 || len(r.Read.Pages) > 2 {
		t.Errorf("--pages 2: %+v", r.Read)
	}

	code, out, stderr := runCLI("scan", "--profile", as, url)
	if code != exitOK {
		t.Fatalf("scan --profile: exit %d: %s", code, stderr)
	}
	for _, w := range []string{"Profile\n", "Judged as " + as + " (requested; detected: " + own.Profile.Detected + ")", "As another kind: ", "Read suite — ", "R.1 "} {
		if !strings.Contains(out, w) {
			t.Errorf("the text report lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range [][]string{{"--pages", "51"}, {"--pages", "-1"}, {"--profile", "zz-prof"}} {
		if code, _, stderr := runCLI(append(append([]string{"scan"}, bad...), url)...); code != exitUsage || stderr == "" {
			t.Errorf("scan %v: exit %d, want %d with a message", bad, code, exitUsage)
		}
	}
}

// --waivers takes the site's own declaration format as a CI config: its
// waivers are config waivers, its profile counts unless --profile is
// given, and a file with a mistake is a usage error that says what.
func TestScanWaiversFile(t *testing.T) {
	url := site(t, "full")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"profile": "api", "waivers": [{"check": "4.5", "reason": "our pages are tools, not articles"}, {"check": "R.12", "reason": "llms.txt lists only the guides"}]}`)
	r := scanJSON(t, "--waivers", good, url)
	if r.Profile == nil || r.Profile.ID != "api" || r.Profile.Source != "requested" {
		t.Fatalf("--waivers: profile %+v, want api from the file", r.Profile)
	}
	waived := map[string]bool{}
	for _, w := range r.Profile.Waivers {
		if w.From == "config" {
			waived[w.Check] = true
		}
	}
	if !waived["4.5"] || !waived["R.12"] {
		t.Errorf("config waivers: %+v", r.Profile.Waivers)
	}
	na := false
	for _, n := range r.Profile.NotApplicable {
		if n.ID == "4.5" && n.By == "waiver" {
			na = true
		}
	}
	if !na {
		t.Errorf("4.5 (failing on the full site) is not waived: %+v", r.Profile.NotApplicable)
	}
	if r := scanJSON(t, "--waivers", good, "--profile", "docs", url); r.Profile == nil || r.Profile.ID != "docs" {
		t.Errorf("--profile docs with a file naming api: %+v", r.Profile)
	}
	for name, body := range map[string]string{
		"notjson.json":    "waivers: none",
		"badcheck.json":   `{"waivers": [{"check": "9.9", "reason": "x"}]}`,
		"noreason.json":   `{"waivers": [{"check": "1.14"}]}`,
		"badprofile.json": `{"profile": "blog"}`,
	} {
		code, _, stderr := runCLI("scan", "--waivers", write(name, body), url)
		if code != exitUsage || !strings.Contains(stderr, "--waivers") {
			t.Errorf("%s: exit %d, stderr %q; want %d naming --waivers", name, code, stderr, exitUsage)
		}
	}
	if code, _, _ := runCLI("scan", "--waivers", filepath.Join(dir, "missing.json"), url); code != exitUsage {
		t.Errorf("a missing file: exit %d", code)
	}
}

// --min-score reads the score without the checks a waivers file or a
// profile takes out: a CI gate is judged the way the file says.
func TestMinScoreWithWaivers(t *testing.T) {
	url := site(t, "full")
	own := scanJSON(t, url)
	p := filepath.Join(t.TempDir(), "waivers.json")
	if err := os.WriteFile(p, []byte(`{"waivers": [{"check": "4.5", "reason": "served over http on the test bench"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waived := scanJSON(t, "--waivers", p, url)
	if waived.Profile.Score.Value <= own.Score.Value {
		t.Fatalf("waiving a failing check left the score at %d (was %d)", waived.Profile.Score.Value, own.Score.Value)
	}
	target := strconv.Itoa(own.Score.Value + 1) // above the plain score, at most the waived one
	if code, _, _ := runCLI("scan", "--min-score", target, url); code != exitBelowTarget {
		t.Errorf("--min-score %s without waivers: exit %d, want %d", target, code, exitBelowTarget)
	}
	if code, _, stderr := runCLI("scan", "--min-score", target, "--waivers", p, url); code != exitOK {
		t.Errorf("--min-score %s with the waiver: exit %d (%s), want %d", target, code, stderr, exitOK)
	}
}

// The text output says what the scan skipped in the site's declaration,
// so an owner sees why a waiver does not count; without any, it says
// nothing of it.
func TestRenderProfileSaysWhatTheDeclarationSkipped(t *testing.T) {
	plain := func(_, s string) string { return s }
	p := &report.Profile{ID: "docs", Source: "detected", Detected: "docs", Grade: "B"}
	var without strings.Builder
	renderProfile(&without, p, plain)
	p.DeclarationProblems = []string{"waiver 2 (check R.5) gives no reason", `"profile" names no known profile`}
	var with strings.Builder
	renderProfile(&with, p, plain)
	want := `Skipped in the site's /.well-known/agentready.json: waiver 2 (check R.5) gives no reason; "profile" names no known profile`
	if !strings.Contains(with.String(), want) || strings.Contains(without.String(), "Skipped in") {
		t.Errorf("with problems:\n%s\nwithout:\n%s", with.String(), without.String())
	}
}
