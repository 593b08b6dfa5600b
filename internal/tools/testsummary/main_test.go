package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A throwaway module with every outcome go test can report.
var module = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"ok/ok_test.go": `package ok
import "testing"
func TestA(t *testing.T) { t.Log("PASSING-LOG") }
func TestPartial(t *testing.T) { t.Log("left out, missing: Chromium") }
func TestSub(t *testing.T) {
	t.Run("x", func(t *testing.T) {})
	t.Run("y", func(t *testing.T) { t.Skip("no y here") })
}
`,
	"fail/fail_test.go": `package fail
import "testing"
func TestBad(t *testing.T) { t.Log("context line"); t.Errorf("want 1, got 2\nsecond line") }
func TestGood(t *testing.T) {}
func TestParent(t *testing.T) { t.Run("child", func(t *testing.T) { t.Fatal("child broke") }) }
`,
	"skip/skip_test.go": `package skip
import "testing"
func TestNeedsRedis(t *testing.T) { t.Log("looking"); t.Skip("missing: REDIS_URL (a Redis to test against)") }
func TestSkipf(t *testing.T) { t.Skipf("multi\nline") }
`,
	"broken/broken_test.go": `package broken
import "testing"
func TestX(t *testing.T) { var x int = "s"; _ = x }
`,
	"nofiles/n.go": "package nofiles\n",
	"panics/p_test.go": `package panics
import "testing"
func TestBoom(t *testing.T) { var m map[string]int; m["a"] = 1 }
`,
	"exits/e_test.go": `package exits
import ("os"; "testing")
func TestFirst(t *testing.T) {}
func TestExit(t *testing.T) { t.Log("about to exit"); os.Exit(3) }
`,
}

func writeModule(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range module {
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

func goCmd(t *testing.T) string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return p
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func index(t *testing.T, ls []string, want string) int {
	t.Helper()
	for i, l := range ls {
		if l == want {
			return i
		}
	}
	t.Fatalf("no line %q in:\n%s", want, strings.Join(ls, "\n"))
	return -1
}

// A real go test run over every kind of outcome: failures printed in full
// before the summary line, the counts right, each skip with its message
// after it, and exit status 1.
func TestRealRun(t *testing.T) {
	dir := writeModule(t)
	var out, errb bytes.Buffer
	code := run([]string{"-go", goCmd(t), "-count=1", "./..."}, dir, &out, &errb)
	o := out.String()
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	ls := lines(o)
	// Passed: TestA, TestPartial, TestSub, TestSub/x, TestGood, TestFirst.
	// Failed: TestBad, TestParent, TestParent/child, TestBoom, TestExit (did
	// not finish), broken (build failed). Skipped: TestSub/y, TestNeedsRedis,
	// TestSkipf.
	sum := index(t, ls, "6 passed, 6 failed, 3 skipped")
	if sum != len(ls)-7 || ls[sum+1] != "skipped:" || ls[sum+5] != "passed with a part left out:" || ls[sum+6] != "  ./ok TestPartial: ok_test.go:4: left out, missing: Chromium" {
		t.Errorf("the summary must be followed by exactly the three skips and the part left out:\n%s", o)
	}
	for _, want := range []string{
		"  ./ok TestSub/y: ok_test.go:7: no y here",
		"  ./skip TestNeedsRedis: skip_test.go:3: missing: REDIS_URL (a Redis to test against)",
		"  ./skip TestSkipf: skip_test.go:4: multi / line",
	} {
		if i := index(t, ls, want); i <= sum {
			t.Errorf("%q must come after the summary", want)
		}
	}
	for _, want := range []string{
		"    fail_test.go:3: context line", // the whole output of a failed test
		"    fail_test.go:3: want 1, got 2",
		"        second line",
		"--- FAIL: TestBad (0.00s)",
		"    fail_test.go:5: child broke",
		"panic: assignment to entry in nil map [recovered, repanicked]",
		"    e_test.go:4: about to exit",
		`broken/broken_test.go:3:40: cannot use "s" (untyped string constant) as int value in variable declaration`,
		"failed: ./fail TestBad",
		"failed: ./exits TestExit (did not finish)",
		"failed: ./broken (build or setup failed)",
	} {
		if i := index(t, ls, want); i >= sum {
			t.Errorf("%q must come before the summary", want)
		}
	}
	for _, prefix := range []string{"ok  \texample.com/m/ok\t", "FAIL\texample.com/m/fail\t", "FAIL\texample.com/m/broken [build failed]"} {
		if !strings.Contains(o, "\n"+prefix) {
			t.Errorf("go test's closing line %q is missing", prefix)
		}
	}
	for _, never := range []string{"PASSING-LOG", "=== RUN", `"Action"`} {
		if strings.Contains(o, never) {
			t.Errorf("output contains %q:\n%s", never, o)
		}
	}
}

func TestAllPassExitsZero(t *testing.T) {
	dir := writeModule(t)
	var out, errb bytes.Buffer
	if code := run([]string{"-go", goCmd(t), "-count=1", "./ok", "./skip", "./nofiles"}, dir, &out, &errb); code != 0 {
		t.Errorf("exit %d, want 0:\n%s%s", code, out.String(), errb.String())
	}
	ls := lines(out.String())
	index(t, ls, "4 passed, 0 failed, 3 skipped")
	if strings.Contains(out.String(), "failed:") {
		t.Errorf("a failure reported on a passing run:\n%s", out.String())
	}
}

// go test failing before any test runs still ends in a summary that does
// not read as success, with go's own message kept.
func TestGoTestErrorIsAFailure(t *testing.T) {
	dir := writeModule(t)
	for _, c := range []struct{ arg, recap, message string }{
		{"./does-not-exist", "failed: ./does-not-exist (build or setup failed)", "does-not-exist"},
		{"-count=many", "failed: go test (exit status 2; its messages are above)", "many"},
	} {
		var out, errb bytes.Buffer
		if code := run([]string{"-go", goCmd(t), c.arg}, dir, &out, &errb); code != 1 {
			t.Errorf("%s: exit %d, want 1", c.arg, code)
		}
		ls := lines(out.String())
		if sum := index(t, ls, "0 passed, 1 failed, 0 skipped"); ls[sum-1] != c.recap {
			t.Errorf("%s: the recap must say what failed:\n%s", c.arg, out.String())
		}
		if !strings.Contains(errb.String()+out.String(), c.message) {
			t.Errorf("%s: go's own message is lost: stdout %q stderr %q", c.arg, out.String(), errb.String())
		}
	}
}

func TestMissingGoCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-go", filepath.Join(t.TempDir(), "no-go-here"), "./..."}, "", &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "cannot start") {
		t.Errorf("stderr %q", errb.String())
	}
}

func ev(action, pkg, test, output string) string {
	return fmt.Sprintf(`{"Action":%q,"Package":%q,"Test":%q,"Output":%q}`, action, pkg, test, output) + "\n"
}

// Hostile streams: a test logging far more than anyone reads, a line with
// no end, text that is not an event. Memory and output stay bounded and the
// failure is still reported.
func TestBoundedOnHugeOutput(t *testing.T) {
	var in strings.Builder
	in.WriteString("not json at all\n")
	in.WriteString(ev("run", "p", "TestBig", ""))
	in.WriteString(ev("output", "p", "TestBig", "    big_test.go:1: FIRST\n"))
	chunk := strings.Repeat("x", 4096) + "\n"
	for range 2000 { // 8 MB of logging
		in.WriteString(ev("output", "p", "TestBig", chunk))
	}
	in.WriteString(ev("output", "p", "TestBig", "    big_test.go:9: LAST\n"))
	in.WriteString(ev("fail", "p", "TestBig", ""))
	in.WriteString(`{"Action":"output","Output":"` + strings.Repeat("y", 3<<20) + "\n") // 3 MB, cut, not JSON
	in.WriteString(ev("fail", "p", "", ""))
	var out bytes.Buffer
	s := newSummary(&out, "")
	s.read(strings.NewReader(in.String()))
	if code := s.finish(0); code != 1 {
		t.Errorf("exit %d", code)
	}
	o := out.String()
	if out.Len() > 3<<20 {
		t.Errorf("%d bytes printed", out.Len())
	}
	for _, want := range []string{"not json at all\n", "FIRST", "LAST", "bytes of output left out", "\nfailed: p TestBig\n", "\n0 passed, 1 failed, 0 skipped\n"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
