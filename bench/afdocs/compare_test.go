package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// TestComparisonTable runs the comparison on one fixture site with AFDocs
// at its fastest (its default 200 ms delay only adds waiting): AFDocs must
// produce its JSON report, the table must have a row for every AFDocs
// check, and both tools must have reached the site.
func TestComparisonTable(t *testing.T) {
	testenv.Quick(t, "the AFDocs comparison (it runs node)")
	root := testenv.RepoRoot()
	cfg := Config{
		Node:    "node",
		Script:  filepath.Join(root, ScriptPath),
		Runs:    1,
		Modes:   Modes[1:],
		Timeout: 45 * time.Second,
	}
	var missing []string
	if _, err := os.Stat(cfg.Script); err != nil {
		missing = append(missing, "AFDocs (npm ci --prefix bench/afdocs --no-audit --no-fund)")
	}
	if _, err := exec.LookPath(cfg.Node); err != nil {
		missing = append(missing, "node (apt-get install nodejs)")
	}
	testenv.Require(t, missing...)

	dir := filepath.Join(root, "testdata", "sites", "full")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	results, err := Compare(ctx, cfg, []string{dir}, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("%d site results, want 1", len(results))
	}
	r := results[0]
	rep := r.AFDocs[0]
	if len(rep.Results) < 20 {
		t.Errorf("AFDocs reported %d checks, want at least 20", len(rep.Results))
	}
	// Every AFDocs check the table maps must be one AFDocs still reports:
	// a renamed check would otherwise show as "—" and compare nothing.
	for _, f := range Facts {
		if s := rep.Status(f.AFDocs); s == "" {
			t.Errorf("AFDocs reported no %s (its checks: %v)", f.AFDocs, ids(rep))
		}
	}
	for _, c := range rep.Results {
		if !known(c.ID) {
			t.Errorf("AFDocs check %s is not in Facts: map it or list it as not covered", c.ID)
		}
	}
	// The full site has a valid llms.txt: both tools must say so, through
	// check 1.1 on our side.
	if got := rep.Status("llms-txt-exists"); got != "pass" {
		t.Errorf("AFDocs llms-txt-exists on full = %q, want pass", got)
	}
	if got := OurStatus(r.Ours, "1.1"); got != "pass" {
		t.Errorf("agentready 1.1 on full = %q, want pass", got)
	}
	if r.Ours.Read == nil {
		t.Fatal("agentready's report has no read suite")
	}
	for _, f := range Facts {
		if strings.HasPrefix(f.Ours, "R.") && OurStatus(r.Ours, f.Ours) == "" {
			t.Errorf("the read suite has no %s", f.Ours)
		}
	}
	if len(r.Cost) != 2 {
		t.Fatalf("%d measures, want one for AFDocs and one for agentready", len(r.Cost))
	}
	for i, c := range r.Cost {
		if c.Requests <= 0 || c.Wall <= 0 {
			t.Errorf("measure %d: %d requests in %s, want both above 0", i, c.Requests, c.Wall)
		}
	}

	var buf bytes.Buffer
	WriteTables(&buf, cfg, results)
	out := buf.String()
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| `") {
			rows++
		}
	}
	if rows != len(Facts) {
		t.Errorf("the verdict table has %d check rows, want %d:\n%s", rows, len(Facts), out)
	}
	for _, f := range Facts {
		if !strings.Contains(out, "| `"+f.AFDocs+"` |") {
			t.Errorf("no row for %s", f.AFDocs)
		}
	}
	if !strings.Contains(out, "| full |") {
		t.Errorf("no cost row for the site:\n%s", out)
	}
	t.Logf("\n%s", out)
}

func ids(r *AFDocsReport) []string {
	var out []string
	for _, c := range r.Results {
		out = append(out, c.ID)
	}
	return out
}

func known(id string) bool {
	return slices.ContainsFunc(Facts, func(f Fact) bool { return f.AFDocs == id })
}
