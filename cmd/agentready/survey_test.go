package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/survey"
)

// The command end to end: a list of two fixture sites, a duplicate and an
// invalid line, surveyed into a directory with every report; run again, it
// scans nothing and reports the same.
func TestSurveyCommand(t *testing.T) {
	full, peer := site(t, "full"), site(t, "peer")
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("# two fixture sites\n"+full+"\n"+peer+"\n"+full+"/\nnot a site\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"survey", "--in", list, "--out", out, "--allow-private", "--concurrency", "2", "--contact", "mailto:survey@example.org"}
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Surveyed 2 sites: 2 judged, 0 unreachable, 1 duplicate and 1 invalid lines skipped.") {
		t.Errorf("stdout: %s", stdout)
	}
	for _, f := range []string{survey.ResultsFile, survey.SkippedFile, survey.ManifestFile, survey.AdoptionFile, survey.HTMLFile, survey.MarkdownFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	var ad survey.Adoption
	b, _ := os.ReadFile(filepath.Join(out, survey.AdoptionFile))
	if err := json.Unmarshal(b, &ad); err != nil {
		t.Fatal(err)
	}
	// full passes llms.txt (1.1) and peer too; full reaches level 3, peer 0.
	if c := ad.Checks["1.1"]; c == nil || c.Pass != 2 || ad.Levels[3] != 1 || ad.Levels[0] != 1 || len(ad.Signals) != 5 {
		t.Errorf("adoption: 1.1 %+v, levels %v, %d signals", ad.Checks["1.1"], ad.Levels, len(ad.Signals))
	}
	if ua := ad.Methods.Settings.UserAgent; !strings.Contains(ua, "mailto:survey@example.org") || !strings.HasPrefix(ua, "agentready/") {
		t.Errorf("User-Agent %q", ua)
	}
	code, again, stderr := runCLI(args...)
	if code != exitOK || again != stdout {
		t.Errorf("again: exit %d, %q (first: %q) %s", code, again, stdout, stderr)
	}
}

func TestSurveyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte("example.com\n"), 0o644)
	for name, args := range map[string][]string{
		"no list":       {"survey", "--out", dir},
		"no output":     {"survey", "--in", list},
		"bad shard":     {"survey", "--in", list, "--out", dir, "--shard", "4/4"},
		"bad contact":   {"survey", "--in", list, "--out", dir, "--contact", "call me (maybe)"},
		"bad allow":     {"survey", "--in", list, "--out", dir, "--allow", "example.com"},
		"no such list":  {"survey", "--in", filepath.Join(dir, "none"), "--out", dir},
		"stray arg":     {"survey", "--in", list, "--out", dir, "extra"},
		"merge nothing": {"survey", "merge", "--out", dir},
		"merge no dir":  {"survey", "merge", filepath.Join(dir, "none"), "--out", dir},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "agentready survey") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, stdout, stderr)
		}
	}
}

// The help names every flag of survey.
func TestSurveyHelpNamesEveryFlag(t *testing.T) {
	if !strings.Contains(usage, "\n  agentready survey merge ") {
		t.Error("the usage does not list survey merge")
	}
	for _, f := range flagNames(t, func(a []string, o, e *bytes.Buffer) int { return surveyCmd(a, o, e) }) {
		if !regexp.MustCompile(`(^|[\s\[])--` + regexp.QuoteMeta(f) + `([^a-z0-9-]|$)`).MatchString(usage) {
			t.Errorf("agentready survey --%s is missing from the help", f)
		}
	}
}

// Progress: a live line on a terminal; otherwise nothing until a minute has
// passed, and a closing line.
func TestSurveyProgressLines(t *testing.T) {
	pr := survey.Progress{Total: 20, Done: 10, Resumed: 4, Errors: map[string]int{"site_unreachable/dns": 1, "site_unreachable/timeout": 2}, Started: time.Now().Add(-3 * time.Second)}
	var plain bytes.Buffer
	p := &surveyProgress{w: &plain}
	p.update(pr)
	p.update(pr)
	if plain.Len() != 0 {
		t.Errorf("a log got a line before a minute passed: %q", plain.String())
	}
	pr.Final = true
	p.update(pr)
	line := plain.String()
	for _, want := range []string{"survey: 10/20 sites · 2.0/s · ETA 5s", "3 unreachable (site_unreachable/timeout 2, site_unreachable/dns 1)"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\033") || strings.Count(line, "\n") != 1 {
		t.Errorf("a log line with escapes or several lines: %q", line)
	}
	var term bytes.Buffer
	tp := &surveyProgress{w: &term, tty: true}
	pr.Final = false
	tp.update(pr)
	if !strings.HasPrefix(term.String(), "\r\033[Ksurvey: 10/20 sites") {
		t.Errorf("terminal line %q", term.String())
	}
	tp.clear()
	if !strings.HasSuffix(term.String(), "\r\033[K") {
		t.Error("the live line is not cleared at the end")
	}
}
