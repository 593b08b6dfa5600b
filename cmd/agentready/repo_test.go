package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

const repos = "../../testdata/repos"

func TestRepoExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"repo", filepath.Join(repos, "native"), "--min-level", "5"}, exitOK},
		{[]string{"repo", "--min-level", "5", filepath.Join(repos, "keywords-only")}, exitBelowTarget},
		{[]string{"repo", filepath.Join(repos, "keywords-only")}, exitOK},
		{[]string{"repo", filepath.Join(repos, "native"), "--min-level", "3"}, exitUsage},
		{[]string{"repo", filepath.Join(repos, "native"), "--format", "xml"}, exitUsage},
		{[]string{"repo", filepath.Join(repos, "does-not-exist")}, exitUsage},
		{[]string{"repo"}, exitUsage},
	} {
		if code, _, stderr := runCLI(c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, stderr)
		}
	}
}

func TestRepoJSONShape(t *testing.T) {
	_, out, _ := runCLI("repo", filepath.Join(repos, "native"), "--json")
	var r struct {
		Path      string                 `json:"path"`
		Timestamp string                 `json:"timestamp"`
		Levels    []report.LevelProgress `json:"levels"`
		Checks    []report.Check         `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Path == "" || r.Timestamp == "" || len(r.Checks) != 10 || r.Levels[0].Level.Number != 5 || !r.Levels[0].Complete {
		t.Fatalf("%v %+v", err, r.Levels)
	}
	for _, c := range r.Checks {
		if c.Category != "Agent-Native" || c.Level != 5 || !c.Passed || c.FoundAt == "" {
			t.Errorf("%+v", c)
		}
	}
}

// SARIF output validates against the SARIF 2.1.0 JSON schema (shipped in the
// pinned npm package @microsoft/jest-sarif, see tests/node).
func TestSARIFValidatesAgainstSchema(t *testing.T) {
	schemaPath, missing := testenv.NodeFile("@microsoft/jest-sarif", "lib/schemas/sarif-2.1.0-rtm.5.json")
	if missing != "" {
		testenv.Require(t, missing)
	}
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"native", "partial", "keywords-only"} {
		code, out, stderr := runCLI("repo", filepath.Join(repos, r), "--format", "sarif")
		if code != exitOK {
			t.Fatalf("%s: %d %s", r, code, stderr)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: SARIF does not validate: %v", r, err)
		}
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct{ ID string }
					}
				}
				Results []struct {
					RuleID    string `json:"ruleId"`
					Kind      string `json:"kind"`
					Locations []any  `json:"locations"`
				}
			}
		}
		json.Unmarshal([]byte(out), &log)
		run := log.Runs[0]
		if len(run.Tool.Driver.Rules) != 10 || len(run.Results) != 10 {
			t.Errorf("%s: %d rules, %d results", r, len(run.Tool.Driver.Rules), len(run.Results))
		}
		if r == "native" && (run.Results[0].Kind != "pass" || len(run.Results[0].Locations) != 1) {
			t.Errorf("native 5.1: %+v", run.Results[0])
		}
	}
}

func TestJUnitParsesBack(t *testing.T) {
	_, out, _ := runCLI("repo", filepath.Join(repos, "partial"), "--format", "junit")
	var suites struct {
		Suite struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatal(err)
	}
	s := suites.Suite
	if s.Tests != 10 || s.Failures != 10 || len(s.Cases) != 10 || s.Cases[0].Failure == nil || s.Cases[0].Failure.Type != "partial" {
		t.Errorf("%+v", s)
	}
}

func TestScanWithRepo(t *testing.T) {
	code, out, stderr := runCLI("scan", "--json", site(t, "peer"), "--repo", filepath.Join(repos, "native"))
	if code != exitOK {
		t.Fatalf("%d %s", code, stderr)
	}
	var r report.Result
	json.Unmarshal([]byte(out), &r)
	if len(r.Checks) != 58 || len(r.Levels) != 5 || r.Levels[4].Level.Number != 5 || r.Levels[4].Passed != 10 {
		t.Errorf("%d checks, levels %d", len(r.Checks), len(r.Levels))
	}
}

// The text report says what the walk skipped in words, the largest count
// first, never as a Go map (it once printed "skipped: map[binary or
// generated:2 …]").
func TestRepoTextSaysSkippedInWords(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n\nfunc main() {}\n")
	write("a_test.go", "package main\n")
	write("b_test.go", "package main\n")
	write("c_test.go", "package main\n")
	write("node_modules/x/index.js", "module.exports = 1\n")
	write("vendor/y/y.go", "package y\n")
	write("blob.go", "package main\x00\x01\x02")
	code, out, stderr := runCLI("repo", root)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "; skipped 3 test files, 2 excluded directories and 1 binary or \"Code generated\" file\n"
	if !strings.HasSuffix(out, want) || strings.Contains(out, "map[") {
		t.Errorf("output ends %q, want %q", out[max(0, len(out)-200):], want)
	}
}
