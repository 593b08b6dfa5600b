package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
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
	if code != 0 || json.Unmarshal([]byte(out), &defs) != nil || len(defs) != 58+len(checks.Read()) {
		t.Fatalf("exit %d, %d definitions, want the 58 checks and the %d read checks", code, len(defs), len(checks.Read()))
	}
	if last, want := defs[len(defs)-1], checks.Read()[len(checks.Read())-1].ID; last["id"] != want || last["category"] != report.ReadGroup {
		t.Errorf("last definition %v, want %s in %s", last["id"], want, report.ReadGroup)
	}
}

// exitCodesBlock is where README.md and docs/ci.md show exitCodes.
var exitCodesBlock = regexp.MustCompile(`(?s)(<!-- exit-codes: [^\n]*-->\n)(.*?)(<!-- /exit-codes -->)`)

// The help listed exit codes 0–3, the README 0–4 and
// 130. Both come from exitCodes now; -update (make docs) rewrites the docs'
// copies.
func TestExitCodesInDocs(t *testing.T) {
	want := "\n" + exitCodesMarkdown() + "\n"
	for _, rel := range []string{"README.md", "docs/ci.md"} {
		path := filepath.Join(testenv.RepoRoot(), rel)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks := exitCodesBlock.FindAllStringSubmatch(string(b), -1)
		if len(blocks) != 1 {
			t.Errorf("%s has %d exit-code blocks (<!-- exit-codes: … --> … <!-- /exit-codes -->), want 1", rel, len(blocks))
			continue
		}
		if blocks[0][2] == want {
			continue
		}
		if !*updateREADME {
			t.Errorf("%s's exit codes are not the help's; run `make docs`. They are:\n%s", rel, want)
			continue
		}
		fresh := exitCodesBlock.ReplaceAllString(string(b), "${1}"+strings.ReplaceAll(want, "$", "$$")+"${3}")
		if err := os.WriteFile(path, []byte(fresh), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: exit codes rewritten", rel)
	}
}

// madeCLI builds the CLI as a user does, with `make build` (so with the
// Makefile's -ldflags), VERSION set to version, into the test's temporary
// directory.
func madeCLI(t *testing.T, version string) string {
	t.Helper()
	testenv.Quick(t, "tests that build the agentready binary and run it")
	mk, err := exec.LookPath("make")
	if err != nil {
		testenv.Require(t, "make (apt-get install make)")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command: %v", err)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(mk, "-s", "-C", testenv.RepoRoot(), "build", "GO="+goCmd, "BIN="+dir, "VERSION="+version)
	// A make running this test passes its flags and variables down through
	// the environment; this make gets only these.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "agentready")
}

// runBinary runs the built CLI without this process's AGENTREADY_ settings
// and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AGENTREADY_") })
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("agentready %s still running after 2 minutes; stderr: %s", strings.Join(args, " "), stderr.String())
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("agentready %s: %v", strings.Join(args, " "), err)
	}
	return 0, stdout.String(), stderr.String()
}

// /healthz said 1.0.0, the scanner's User-Agent
// agentready/1.0, and there was no `agentready version`. One version, the
// build's (make build: git describe), everywhere; run as a user runs it.
func TestVersionIsOneEverywhere(t *testing.T) {
	const v = "v9.8.7-clitest"
	bin := madeCLI(t, v)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, errb := runBinary(t, bin, args...); code != exitOK || out != "agentready "+v+"\n" || errb != "" {
			t.Errorf("agentready %s: exit %d, stdout %q, stderr %q", args[0], code, out, errb)
		}
	}
	if code, _, errb := runBinary(t, bin, "version", "extra"); code != exitUsage || !strings.Contains(errb, `unexpected argument "extra"`) {
		t.Errorf("agentready version extra: exit %d, %q", code, errb)
	}

	// The scanner's User-Agent, on every request of a scan.
	var mu sync.Mutex
	agents := map[string]bool{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents[r.UserAgent()] = true
		mu.Unlock()
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html lang=en><title>t</title><h1>t</h1></html>")
	}))
	t.Cleanup(site.Close)
	if code, _, errb := runBinary(t, bin, "scan", "--json", site.URL); code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, errb)
	}
	mu.Lock()
	want := "agentready/" + v + " (+https://agentready.dev/bot; agent-readiness scanner)"
	if len(agents) != 1 || !agents[want] {
		t.Errorf("the scan's User-Agents: %v, want only %q", agents, want)
	}
	mu.Unlock()

	// /healthz and the MCP server card of `agentready serve`.
	s := serveBinary(t, bin)
	var health struct{ Status, Version string }
	if code := s.getJSON(t, "/healthz", &health); code != 200 || health.Version != v {
		t.Errorf("/healthz: %d, version %q, want %q", code, health.Version, v)
	}
	var card struct {
		Version    string
		ServerInfo struct{ Version string }
	}
	if code := s.getJSON(t, "/.well-known/mcp.json", &card); code != 200 || card.Version != v || card.ServerInfo.Version != v {
		t.Errorf("the MCP server card: %d, version %q, serverInfo %q, want %q", code, card.Version, card.ServerInfo.Version, v)
	}
}

// TestUsageErrorsAreShort as a user meets it: an unknown flag is one error
// and the command's form, not every command's help.
func TestUnknownFlagOfTheBinary(t *testing.T) {
	bin := madeCLI(t, "")
	code, out, errb := runBinary(t, bin, "scan", "--nope", "example.com")
	want := "agentready scan: flag provided but not defined: -nope\nusage: agentready scan <url> [flags]\nRun 'agentready scan --help' for its help.\n"
	if code != exitUsage || out != "" || errb != want {
		t.Errorf("scan --nope: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errb, want)
	}
	code, out, _ = runBinary(t, bin, "scan", "--help")
	if code != exitOK || out != commandHelp("scan") {
		t.Errorf("scan --help: exit %d, not scan's help alone:\n%s", code, out)
	}
	// Without a version from the Makefile, the build information's or "devel".
	if code, out, _ := runBinary(t, bin, "version"); code != exitOK || !regexp.MustCompile(`^agentready (devel|devel-[0-9a-f]{12}(-dirty)?|v\S+)\n$`).MatchString(out) {
		t.Errorf("version without VERSION: exit %d, %q", code, out)
	}
}

// scan --no-private refuses the fixture and says what to allow; --allow
// with that entry admits it (the advice is right).
func TestScanNoPrivateSaysWhatToAllow(t *testing.T) {
	t.Setenv("AGENTREADY_ALLOW", "")
	full := site(t, "full")
	hostPort := strings.TrimPrefix(full, "http://")
	code, _, errb := runCLI("scan", "--no-private", full)
	if code != exitUnreachable || !strings.Contains(errb, "add "+hostPort+" to --allow or AGENTREADY_ALLOW") {
		t.Fatalf("scan --no-private: exit %d, %q", code, errb)
	}
	if code, _, errb := runCLI("scan", "--no-private", "--allow", hostPort, "--json", full); code != exitOK {
		t.Errorf("scan --no-private --allow %s: exit %d, %q", hostPort, code, errb)
	}
	t.Setenv("AGENTREADY_ALLOW", hostPort)
	if code, _, errb := runCLI("scan", "--no-private", "--json", full); code != exitOK {
		t.Errorf("scan --no-private with AGENTREADY_ALLOW=%s: exit %d, %q", hostPort, code, errb)
	}
	if code, _, errb := runCLI("scan", "--allow", "localhost:80", full); code != exitUsage || !strings.Contains(errb, "--allow (AGENTREADY_ALLOW)") {
		t.Errorf("scan --allow localhost:80: exit %d, %q", code, errb)
	}
}
