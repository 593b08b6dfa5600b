package checks

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

var update = flag.Bool("update", false, "rewrite docs/checks.md")

// The catalog matches docs/check-rules.md: 58 ids with the same names, 48 of them in the web scan.
func TestCatalogMatchesSpec(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "check-rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d\.\d+) \| ([^|]+?) (?:\[spec\] )?\|`)
	names := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(spec), -1) {
		names[m[1]] = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[2]), "[spec]"))
	}
	all := All()
	if len(all) != 58 || len(Web()) != 48 || len(names) != 58 {
		t.Fatalf("catalog %d, web %d, spec rows %d", len(all), len(Web()), len(names))
	}
	prev := ""
	for _, c := range all {
		if names[c.ID] != c.Name {
			t.Errorf("%s: name %q, docs/check-rules.md says %q", c.ID, c.Name, names[c.ID])
		}
		if c.WebScan != (c.Level <= 4) || c.Run == nil || len(c.Requires) == 0 {
			t.Errorf("%s: web=%v run=%v requires=%d", c.ID, c.WebScan, c.Run != nil, len(c.Requires))
		}
		if c.LooksFor == "" || c.Rule == "" || c.Fix == "" || c.Category != report.Levels[c.Level-1].Name {
			t.Errorf("%s: incomplete definition", c.ID)
		}
		if prev != "" && !Less(prev, c.ID) {
			t.Errorf("order: %s before %s", prev, c.ID)
		}
		prev = c.ID
	}
}

func TestDocsAreGenerated(t *testing.T) {
	const path = "../../docs/checks.md"
	got := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != got {
		t.Fatalf("docs/checks.md is out of date: run `make docs` (%v)", err)
	}
}

// A panicking check becomes an honest fail, and the report rules hold.
func TestJudgeInvariants(t *testing.T) {
	empty := gather.NewSet(gather.Site{})
	c := &Check{Definition: Definition{ID: "9.9", Level: 1, Name: "x", Category: "Discoverable", Fix: "do x"},
		Run: func(gather.Source) Outcome { panic("boom") }}
	r := c.Judge(empty)
	if r.Status != report.Fail || r.Passed || !strings.Contains(r.Message, "boom") {
		t.Errorf("%+v", r)
	}
	ok := &Check{Definition: c.Definition, Run: func(gather.Source) Outcome {
		return Outcome{Status: report.Pass, Message: "m", Recommendation: "ignored", Details: map[string]any{"a": "<b>"}}
	}}
	if r := ok.Judge(empty); !r.Passed || r.Recommendation != "" || r.Details.String() != `{"a":"<b>"}` {
		t.Errorf("%+v", r)
	}
	bad := &Check{Definition: c.Definition, Run: func(gather.Source) Outcome { return Outcome{Status: report.Partial, Message: "m"} }}
	if r := bad.Judge(empty); r.Passed || r.Recommendation != "do x" {
		t.Errorf("partial falls back to the definition's fix: %+v", r)
	}
}

// A check whose input was never gathered is not run: it fails saying which
// input is missing, instead of judging an absent document as missing from
// the site. A check reading what it did not declare fails too.
func TestJudgeMissingAndUndeclaredInputs(t *testing.T) {
	ran := false
	c := &Check{Definition: Definition{ID: "9.9", Level: 1, Name: "x", Category: "Discoverable", Fix: "do x"},
		Requires: needs(gather.Robots), Run: func(gather.Source) Outcome { ran = true; return pass("m", nil, "") }}
	r := c.Judge(gather.NewSet(gather.Site{}))
	if ran || r.Status != report.Fail || !strings.Contains(r.Message, `"robots" was not gathered`) || r.Recommendation == "" {
		t.Errorf("ran=%v %+v", ran, r)
	}
	set := gather.NewSet(gather.Site{})
	gather.Put(set, gather.Robots, &gather.RobotsTxt{})
	if r := c.Judge(set); !ran || r.Status != report.Pass {
		t.Errorf("with the input present: ran=%v %+v", ran, r)
	}
	sneaky := &Check{Definition: c.Definition, Requires: needs(gather.Robots), Run: func(in gather.Source) Outcome {
		gather.Get(in, gather.Llms)
		return pass("m", nil, "")
	}}
	gather.Put(set, gather.Llms, &gather.LlmsTxt{})
	if r := sneaky.Judge(set); r.Status != report.Fail || !strings.Contains(r.Message, `"llms" read without being declared`) {
		t.Errorf("an undeclared read passed: %+v", r)
	}
}
