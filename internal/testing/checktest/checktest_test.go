package checktest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/report"
)

const sites = "../../../testdata/sites/"

// The harness passes on two fixture sites whose expectations hold.
func TestSite(t *testing.T) {
	for _, name := range []string{"full", "empty"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			Site(t, sites+name)
		})
	}
}

// A verdict that differs, a check the report lacks and a check the
// expectation leaves out are each reported: Site would fail.
func TestDiffCatchesEveryDifference(t *testing.T) {
	res := Scan(t, sites+"full")
	want := Expect(t, sites+"full")
	if d := Diff(res, want); len(d) != 0 {
		t.Fatalf("unaltered expectation: %q", d)
	}

	altered := map[string]report.Status{}
	for id, s := range want {
		altered[id] = s
	}
	flip := report.Fail
	if want["1.1"] == report.Fail {
		flip = report.Pass
	}
	altered["1.1"] = flip
	delete(altered, "1.2")
	altered["9.9"] = report.Pass
	d := Diff(res, altered)
	if len(d) != 3 {
		t.Fatalf("altered expectation: %d differences, want 3: %q", len(d), d)
	}
	for i, prefix := range []string{"1.1 ", "9.9: missing", "1.2 "} {
		if !strings.HasPrefix(d[i], prefix) {
			t.Errorf("difference %d = %q, want it to start with %q", i, d[i], prefix)
		}
	}
}

// recorder is a test that keeps its errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Site itself fails a test whose site answers one verdict other than its
// _expect.json says: here a copy of the empty site expecting 1.1 to pass.
func TestSiteFailsOnAlteredExpectation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	if err := os.CopyFS(dir, os.DirFS(sites+"empty")); err != nil {
		t.Fatal(err)
	}
	want := Expect(t, dir)
	if want["1.1"] == report.Pass {
		t.Fatal("the empty site was expected to pass 1.1")
	}
	want["1.1"] = report.Pass
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ExpectFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	Site(rec, dir)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "1.1 ") || !strings.Contains(rec.errs[0], "want pass") {
		t.Errorf("Site reported %q, want one error for 1.1", rec.errs)
	}
}
