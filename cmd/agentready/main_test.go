package main

import (
	"bytes"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/fixture"
)

func site(t *testing.T, name string) string {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "..", "testdata", "sites", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.URL
}

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestScanJSONIsTheAPIReport(t *testing.T) {
	code, out, stderr := runCLI("scan", "--json", site(t, "full"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r report.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 48 || r.CurrentLevel != 3 || len(r.Levels) != 4 || r.Score.Grade != "A" {
		t.Errorf("checks %d level %d levels %d grade %s", len(r.Checks), r.CurrentLevel, len(r.Levels), r.Score.Grade)
	}
	if stderr != "" {
		t.Errorf("--json with a non-terminal stderr prints nothing else: %q", stderr)
	}
}

func TestScanTextReport(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	code, out, _ := runCLI("scan", site(t, "peer"))
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Level 1 · Discoverable", "✓ 1.1", "✗ 1.12", "→ Publish an MCP server card", "requests in"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Error("colour escapes without a terminal")
	}
}

func TestExitCodes(t *testing.T) {
	peer := site(t, "peer") // level 0, score about 50
	full := site(t, "full") // level 3
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"level reached", []string{"scan", full, "--min-level", "3"}, exitOK},
		{"level not reached", []string{"scan", peer, "--min-level", "1"}, exitBelowTarget},
		{"score not reached", []string{"scan", "--min-score", "90", peer}, exitBelowTarget},
		{"unreachable", []string{"scan", dead}, exitUnreachable},
		{"unreachable as JSON", []string{"scan", "--json", dead}, exitUnreachable},
		{"private refused on request", []string{"scan", "--no-private", full}, exitUnreachable},
		{"no url", []string{"scan"}, exitUsage},
		{"two urls", []string{"scan", full, peer}, exitUsage},
		{"bad flag", []string{"scan", "--nope", full}, exitUsage},
		{"bad url", []string{"scan", "javascript:alert(1)"}, exitUsage},
		{"bad level", []string{"scan", full, "--min-level", "4"}, exitUsage},
		{"contradiction", []string{"scan", full, "--allow-private", "--no-private"}, exitUsage},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"no command", nil, exitUsage},
		{"help", []string{"help"}, exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code, _, stderr := runCLI(c.args...); code != c.code {
				t.Errorf("exit %d, want %d (%s)", code, c.code, stderr)
			}
		})
	}
	_, out, _ := runCLI("scan", "--json", dead)
	var env report.ErrorEnvelope
	if err := json.Unmarshal([]byte(out), &env); err != nil || env.Code != "site_unreachable" || env.Docs == "" || !strings.Contains(env.Message, "refused") {
		t.Errorf("unreachable JSON envelope %q: %v", out, err)
	}
}

func TestChecksCommand(t *testing.T) {
	code, out, _ := runCLI("checks", "--json")
	var defs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &defs) != nil || len(defs) != 58 {
		t.Fatalf("exit %d, %d definitions", code, len(defs))
	}
}
