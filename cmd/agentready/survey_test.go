package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
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
	if !strings.Contains(stdout, "Surveyed 2 sites: 2 judged, 0 unreachable, 1 duplicate and 1 invalid lines skipped.") ||
		!strings.Contains(stdout, "Levels 0–3: 1 at level 0, 0 at 1, 0 at 2, 1 at 3\n") {
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
		"no list":         {"survey", "--out", dir},
		"no output":       {"survey", "--in", list},
		"bad shard":       {"survey", "--in", list, "--out", dir, "--shard", "5/4"},
		"bad contact":     {"survey", "--in", list, "--out", dir, "--contact", "call me (maybe)"},
		"bad allow":       {"survey", "--in", list, "--out", dir, "--allow", "example.com"},
		"no such list":    {"survey", "--in", filepath.Join(dir, "none"), "--out", dir},
		"stray arg":       {"survey", "--in", list, "--out", dir, "extra"},
		"merge nothing":   {"survey", "merge", "--out", dir},
		"merge no dir":    {"survey", "merge", filepath.Join(dir, "none"), "--out", dir},
		"survey no queue": {"survey", "--in", list, "--out", dir, "--survey", "top"},
		"worker no queue": {"survey", "--in", list, "--out", dir, "--worker", "w1"},
		"queue and shard": {"survey", "--in", list, "--out", dir, "--queue", "redis://127.0.0.1:1/0", "--shard", "1/2"},
		"queue no out":    {"survey", "--in", list, "--queue", "redis://127.0.0.1:1/0"},
		"queue no list":   {"survey", "--out", dir, "--queue", "redis://127.0.0.1:1/0"},
		"bad survey name": {"survey", "--in", list, "--out", dir, "--queue", "redis://127.0.0.1:1/0", "--survey", "a{b}"},
		"bad worker name": {"survey", "--in", list, "--out", dir, "--queue", "redis://127.0.0.1:1/0", "--worker", "a b"},
		"bad queue url":   {"survey", "--in", list, "--out", dir, "--queue", "http://:secret@127.0.0.1:1/0"},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "agentready survey") || strings.Contains(stderr, "secret") {
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

	// A queue's worker: its own count and rate, the queue's length, and the
	// time left at the rate all the workers drain it (100 sites in 4 s).
	qp := survey.Progress{Queue: true, Total: 1000, Done: 30, Resumed: 10, Remaining: 600, RemainingAtStart: 700, Started: time.Now().Add(-4 * time.Second), Final: true}
	var ql bytes.Buffer
	(&surveyProgress{w: &ql}).update(qp)
	if want := "survey: 30 sites by this worker · 5.0/s · 600 of 1000 left in the queue · ETA 24s\n"; ql.String() != want {
		t.Errorf("queue progress %q, want %q", ql.String(), want)
	}
}

// Two workers of one survey kept in Redis, started by the command: the
// one given the list loads it, the other joins by the survey's name (here
// with the queue's URL from AGENTREADY_SURVEY_QUEUE); their directories
// merged report what one machine reports.
func TestSurveyQueueCommand(t *testing.T) {
	url := testenv.RedisURL(t)
	full, peer, partial := site(t, "full"), site(t, "peer"), site(t, "partial")
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(full+"\n"+peer+"\n"+partial+"\n"+full+"/\nnot a site\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--allow-private", "--concurrency", "2", "--contact", "mailto:survey@example.org"}
	code, oneOut, stderr := runCLI(append([]string{"survey", "--in", list, "--out", filepath.Join(dir, "one")}, common...)...)
	if code != exitOK {
		t.Fatalf("one machine: exit %d: %s", code, stderr)
	}
	name := fmt.Sprintf("cli-test-%d", time.Now().UnixNano())
	t.Cleanup(func() { survey.DeleteQueue(context.Background(), url, name) })
	t.Setenv("AGENTREADY_SURVEY_QUEUE", url)
	type result struct {
		code           int
		stdout, stderr string
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, args := range [][]string{
		{"survey", "--queue", url, "--survey", name, "--in", list, "--out", filepath.Join(dir, "w1"), "--worker", "w1"},
		{"survey", "--survey", name, "--out", filepath.Join(dir, "w2"), "--worker", "w2"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, o, e := runCLI(append(args, common...)...)
			results[i] = result{c, o, e}
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != exitOK || !strings.Contains(r.stdout, fmt.Sprintf("Worker w%d of survey %s wrote", i+1, name)) || !strings.Contains(r.stdout, "every site of the survey's 3 is done") {
			t.Errorf("worker %d: exit %d, stdout %q, stderr %q", i+1, r.code, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(results[0].stderr, "loaded 3 sites of list.txt into the queue's survey "+name) {
		t.Errorf("the loader did not say it loaded the list: %q", results[0].stderr)
	}
	code, mergedOut, stderr := runCLI("survey", "merge", filepath.Join(dir, "w1"), filepath.Join(dir, "w2"), "--out", filepath.Join(dir, "merged"))
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	first := func(s string) string { return strings.SplitN(s, "\n", 2)[0] }
	if first(mergedOut) != first(oneOut) || !strings.Contains(first(oneOut), "Surveyed 3 sites: 3 judged, 0 unreachable, 1 duplicate and 1 invalid lines skipped.") {
		t.Errorf("merged: %q\none machine: %q", mergedOut, oneOut)
	}
	counts := func(d string) map[string]any {
		var m map[string]any
		b, _ := os.ReadFile(filepath.Join(dir, d, survey.AdoptionFile))
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "methods")
		return m
	}
	if a, b := counts("one"), counts("merged"); !reflect.DeepEqual(a, b) {
		t.Errorf("merged counts differ from one machine's:\n%v\n%v", b, a)
	}
}

// A list of local sites without --allow-private: every site is refused, the
// summary says so, stderr says what to do, and the exit status stays 0.
// An --out with a trailing slash prints clean paths.
func TestSurveyRefusedSitesHint(t *testing.T) {
	full, peer := site(t, "full"), site(t, "peer")
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(full+"\n"+peer+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out") + "/"
	code, stdout, stderr := runCLI("survey", "--in", list, "--out", out, "--contact", "mailto:survey@example.org")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Surveyed 2 sites: 0 judged, 2 unreachable", "Refused by the address policy (not a public address): 2 of the 2 unreachable.",
		"Levels 0–3: 0 at level 0, 0 at 1, 0 at 2, 0 at 3", "Reports: " + filepath.Join(dir, "out", survey.AdoptionFile) + ", "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, stdout)
		}
	}
	if strings.Contains(stdout, "//") {
		t.Errorf("a path with //: %s", stdout)
	}
	if !strings.Contains(stderr, "all 2 sites were refused") || !strings.Contains(stderr, "--allow-private") || !strings.Contains(stderr, "--allow IP") || !strings.Contains(stderr, "exit status stays 0") {
		t.Errorf("stderr lacks the hint: %s", stderr)
	}
}
