// Package checktest is the harness of the fixture sites' verdicts: Site
// serves testdata/sites/<name> on loopback, scans it as the engine's tests
// do, and fails the test for every check whose verdict differs from the
// site's _expect.json. A new check then costs its gatherer file, its check
// file, a verdict in each _expect.json and one call:
//
//	checktest.Site(t, "testdata/sites/full")
package checktest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// ExpectFile is the name of a fixture site's expected verdicts: a JSON
// object from check id to status.
const ExpectFile = "_expect.json"

// Now is the clock of every harness scan, and of the engine's fixture tests.
var Now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// Scanner is the engine as the fixture tests run it: it may reach the
// fixture servers (loopback, any port) but still refuses link-local and
// metadata addresses.
func Scanner(deadline time.Duration) *engine.Scanner {
	return engine.New(engine.Options{
		Deadline: deadline,
		Fetch:    fetch.Config{Policy: loopback.Policy()},
		Now:      func() time.Time { return Now },
	})
}

// Expect reads the verdicts dir/_expect.json lists.
func Expect(t testing.TB, dir string) map[string]report.Status {
	t.Helper()
	p := filepath.Join(dir, ExpectFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]report.Status
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return want
}

// Scan serves the fixture site in dir for the length of the test and scans it.
func Scan(t testing.TB, dir string, opts ...fixture.Option) *report.Result {
	t.Helper()
	site, err := fixture.Start(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	res, _, err := Scanner(20*time.Second).ScanWithStats(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatalf("scan %s: %v", dir, err)
	}
	return res
}

// ProfileKey is the key of _expect.json that names the profile the scan
// must detect; every other key is a check id (1.1…4.12, R.1…).
const ProfileKey = "profile"

// Diff lists, by check id, every difference between a scan's verdicts and
// want: a check want lists that the report lacks, a verdict that differs,
// and a check of the report (web or read suite) that want does not list;
// and the detected profile when want names one. It is empty when they
// agree.
func Diff(res *report.Result, want map[string]report.Status) []string {
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		if id == ProfileKey {
			if res.Profile == nil || res.Profile.Detected != string(want[id]) {
				got := "none"
				if res.Profile != nil {
					got = res.Profile.Detected + " (" + strings.Join(res.Profile.Evidence, "; ") + ")"
				}
				out = append(out, fmt.Sprintf("profile: detected %s, want %s", got, want[id]))
			}
			continue
		}
		c, ok := res.Check(id)
		if !ok {
			c, ok = res.ReadCheck(id)
		}
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: missing from report", id))
		case c.Status != want[id]:
			out = append(out, fmt.Sprintf("%s %s: got %s, want %s — %s (details %s)", id, c.Name, c.Status, want[id], c.Message, c.Details))
		}
	}
	listed := func(checks []report.Check) {
		for _, c := range checks {
			if _, ok := want[c.ID]; !ok {
				out = append(out, fmt.Sprintf("%s %s: got %s, not listed in %s", c.ID, c.Name, c.Status, ExpectFile))
			}
		}
	}
	listed(res.Checks)
	if res.Read != nil {
		listed(res.Read.Checks)
	}
	return out
}

// Site scans the fixture site in dir and fails t for every verdict that
// differs from dir/_expect.json (see Diff).
func Site(t testing.TB, dir string, opts ...fixture.Option) {
	t.Helper()
	want := Expect(t, dir)
	for _, d := range Diff(Scan(t, dir, opts...), want) {
		t.Errorf("%s: %s", filepath.Base(dir), d)
	}
}

// WriteSite writes a fixture site, path → body, to a directory of its own
// (removed with the test) and returns it, for a test that builds the site
// it scans.
func WriteSite(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Prose is a paragraph long enough that a page holding it reads as
// content (not thin, not a shell) to the read suite and the detection.
const Prose = `<p>Lantern schedules jobs across a fleet of workers. This page explains how
to write a job, how to give it a schedule, how retries and backoff work, and how to
watch a run from the dashboard or the command line. Each section stands on its own,
so read the part you need and come back for the rest when you need it later.</p>`

// ProsePage is a server-rendered page titled title: a heading, Prose and
// then more, such as links (may be empty), in its main element.
func ProsePage(title, more string) string {
	return `<!doctype html><html lang=en><title>` + title + `</title><main><h1>` + title + `</h1>` + Prose + more + `</main></html>`
}
