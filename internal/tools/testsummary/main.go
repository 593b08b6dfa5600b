// Command testsummary runs `go test -json` with the arguments it is given
// (make test's unit step: go run ./internal/tools/testsummary -race -count=1 ./...)
// and prints what a person needs from a long run instead of thousands of
// lines: each package's closing line as go test prints it (ok, FAIL, ?), the
// output of every failed test in full as it fails, and at the end
//
//	failed: ./origin TestScanCache           (one line per failure, if any)
//	1234 passed, 1 failed, 12 skipped        (alone on its line; CI reads it)
//	skipped:
//	  ./internal/ratelimit TestLocalAgreesWithRedisRate: ratelimit_test.go:41: missing: REDIS_URL …
//	passed with a part left out:             (testenv.Optional's log lines)
//	  ./internal/ratelimit TestConformance: ratelimit_test.go:62: left out, missing: REDIS_URL …
//
// Tests and subtests each count once. A package that fails without a failing
// test (a build error, a panic in TestMain, a test binary killed by its
// timeout) counts as one failure, and its output is printed. The exit status
// is 1 when anything failed or go test itself exited non-zero, 0 otherwise.
//
// `-go PATH` as the first two arguments names the go command (make's $(GO)).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

func main() { os.Exit(run(os.Args[1:], "", os.Stdout, os.Stderr)) }

// run runs go test in dir ("": the current directory).
func run(args []string, dir string, stdout, stderr io.Writer) int {
	goCmd := "go"
	if len(args) >= 2 && args[0] == "-go" {
		goCmd, args = args[1], args[2:]
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr // go's own errors (a bad flag, an unreadable go.mod) pass through as they are
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: cannot start %s test: %v (is Go installed and on the PATH?)\n", goCmd, err)
		return 2
	}
	// Ctrl-C reaches go test too (same process group); a SIGTERM sent to this
	// process alone is passed on. Either way the run ends and the summary of
	// what did run is still printed.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	s := newSummary(stdout, modulePath(filepath.Join(dir, "go.mod")))
	s.read(out)
	status := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(stderr, "testsummary: %s test: %v\n", goCmd, err)
		}
		status = max(cmd.ProcessState.ExitCode(), 1)
	}
	return s.finish(status)
}

// modulePath is the module line of go.mod, to print ./pkg instead of the
// full import path; "" when there is none.
func modulePath(gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string
}

// Bounds that keep a runaway test (megabytes of logging, a line without a
// newline) from exhausting memory; failures are still printed, with a note
// of what was left out.
const (
	maxLine     = 1 << 20 // bytes of one JSON line
	maxTestKeep = 1 << 20 // bytes of output kept per test
)

type testKey struct{ pkg, test string }

type testState struct {
	out     []string
	size    int
	dropped int
}

func (t *testState) add(s string) {
	if t.size+len(s) > maxTestKeep {
		// keep the start (what ran) and make room at the end (how it failed)
		for len(t.out) > 1 && t.size+len(s) > maxTestKeep {
			t.dropped += len(t.out[1])
			t.size -= len(t.out[1])
			t.out = append(t.out[:1], t.out[2:]...)
		}
		if len(s) > maxTestKeep/2 {
			t.dropped += len(s) - maxTestKeep/2
			s = s[:maxTestKeep/2] + "\n"
		}
	}
	t.out = append(t.out, s)
	t.size += len(s)
}

type pkgState struct {
	out      []string // output outside any test
	failures int      // failed tests
	running  map[string]bool
}

type summary struct {
	w       io.Writer
	module  string
	tests   map[testKey]*testState
	pkgs    map[string]*pkgState
	passed  int
	failed  []string // what failed, for the recap
	skipped []string // "pkg Test: message"
	leftOut []string // parts of passing tests left out (testenv.Optional)
}

func newSummary(w io.Writer, module string) *summary {
	return &summary{w: w, module: module, tests: map[testKey]*testState{}, pkgs: map[string]*pkgState{}}
}

func (s *summary) short(pkg string) string {
	switch {
	case s.module == "":
		return pkg
	case pkg == s.module:
		return "."
	case strings.HasPrefix(pkg, s.module+"/"):
		return "./" + strings.TrimPrefix(pkg, s.module+"/")
	}
	return pkg
}

func (s *summary) pkg(name string) *pkgState {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgState{running: map[string]bool{}}
		s.pkgs[name] = p
	}
	return p
}

func (s *summary) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			s.line(line)
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, keeping at most maxLine bytes of it.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func (s *summary) line(b []byte) {
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil || e.Action == "" {
		// Not an event: go test wrote it itself (or a line was cut at maxLine). Show it.
		s.w.Write(bytes.TrimRight(b, "\n"))
		io.WriteString(s.w, "\n")
		return
	}
	switch e.Action {
	case "build-output":
		io.WriteString(s.w, e.Output) // compiler and vet errors, printed as go test prints them
		return
	case "build-fail":
		return // counted when its packages fail
	}
	if e.Test == "" {
		s.packageEvent(e)
		return
	}
	k := testKey{e.Package, e.Test}
	t := s.tests[k]
	if t == nil {
		t = &testState{}
		s.tests[k] = t
	}
	p := s.pkg(e.Package)
	switch e.Action {
	case "run":
		p.running[e.Test] = true
	case "output":
		t.add(e.Output)
	case "pass":
		s.passed++
		for _, m := range leftOutParts(t.out) {
			s.leftOut = append(s.leftOut, s.short(e.Package)+" "+e.Test+": "+m)
		}
		s.end(k, p)
	case "fail":
		p.failures++
		s.failed = append(s.failed, s.short(e.Package)+" "+e.Test)
		s.printTest(t)
		s.end(k, p)
	case "skip":
		s.skipped = append(s.skipped, s.short(e.Package)+" "+e.Test+": "+skipReason(t.out))
		s.end(k, p)
	}
}

func (s *summary) end(k testKey, p *pkgState) {
	delete(p.running, k.test)
	delete(s.tests, k) // done: a long run keeps only what is still running
}

func (s *summary) packageEvent(e event) {
	p := s.pkg(e.Package)
	switch e.Action {
	case "output":
		if closing(e.Output) {
			io.WriteString(s.w, e.Output)
		} else if len(p.out) < 10000 {
			p.out = append(p.out, e.Output)
		}
		return
	case "pass", "skip":
	case "fail":
		// Tests that started and never ended: the binary died under them
		// (panic in another goroutine, timeout, os.Exit).
		names := make([]string, 0, len(p.running))
		for name := range p.running {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			k := testKey{e.Package, name}
			if t := s.tests[k]; t != nil {
				fmt.Fprintf(s.w, "--- %s %s did not finish; its output:\n", s.short(e.Package), name)
				s.printTest(t)
			}
			p.failures++
			s.failed = append(s.failed, s.short(e.Package)+" "+name+" (did not finish)")
			s.end(k, p)
		}
		if p.failures == 0 {
			what := "failed outside any test"
			if e.FailedBuild != "" {
				what = "build or setup failed"
			}
			for _, o := range p.out {
				if !strings.HasPrefix(o, "=== ") {
					io.WriteString(s.w, o)
				}
			}
			s.failed = append(s.failed, s.short(e.Package)+" ("+what+")")
		}
	default:
		return // start, and actions of later Go versions
	}
	delete(s.pkgs, e.Package)
}

// closing is go test's last line for a package ("ok  \tpkg\t0.1s",
// "FAIL\tpkg [build failed]", "?   \tpkg\t[no test files]").
func closing(o string) bool {
	return strings.HasPrefix(o, "ok  \t") || strings.HasPrefix(o, "FAIL\t") || strings.HasPrefix(o, "?   \t")
}

// printTest prints a failed test's output without go test's framing lines.
func (s *summary) printTest(t *testState) {
	for i, o := range t.out {
		if i == 1 && t.dropped > 0 {
			fmt.Fprintf(s.w, "    … %d bytes of output left out …\n", t.dropped)
		}
		if isFraming(o) {
			continue
		}
		io.WriteString(s.w, o)
	}
}

func isFraming(o string) bool {
	o = strings.TrimLeft(o, " ")
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(o, p) {
			return true
		}
	}
	return false
}

// logLine starts an entry of t.Log/t.Skip output: "    file_test.go:12: msg".
var logLine = regexp.MustCompile(`^\s+[\w.\-]+\.go:\d+: `)

// skipReason is the last logged entry before --- SKIP: the t.Skip message
// (with its file:line, and its continuation lines joined).
func skipReason(out []string) string {
	var entry []string
	for _, o := range out {
		o = strings.TrimRight(o, "\n")
		switch {
		case isFraming(o), strings.HasPrefix(strings.TrimLeft(o, " "), "--- SKIP"):
		case logLine.MatchString(o):
			entry = []string{strings.TrimSpace(o)}
		case len(entry) > 0 && strings.TrimSpace(o) != "":
			entry = append(entry, strings.TrimSpace(o))
		}
	}
	if len(entry) == 0 {
		return "(no message)"
	}
	return strings.Join(entry, " / ")
}

// leftOut is how testenv.Optional logs a part of a test that could not run
// for want of a component; the test itself passes.
const leftOut = "left out, missing: "

func leftOutParts(out []string) []string {
	var parts []string
	for _, o := range out {
		if logLine.MatchString(o) {
			if _, msg, ok := strings.Cut(strings.TrimSpace(o), ": "); ok && strings.HasPrefix(msg, leftOut) {
				parts = append(parts, strings.TrimSpace(o))
			}
		}
	}
	return parts
}

// finish prints the recap and returns the exit status.
func (s *summary) finish(goStatus int) int {
	// Packages still open when the stream ended: go test was killed.
	names := make([]string, 0, len(s.pkgs))
	for name, p := range s.pkgs {
		if len(p.running) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		s.packageEvent(event{Action: "fail", Package: name})
	}
	if goStatus != 0 && len(s.failed) == 0 {
		s.failed = append(s.failed, fmt.Sprintf("go test (exit status %d; its messages are above)", goStatus))
	}
	fmt.Fprintln(s.w)
	for _, f := range s.failed {
		fmt.Fprintf(s.w, "failed: %s\n", f)
	}
	fmt.Fprintf(s.w, "%d passed, %d failed, %d skipped\n", s.passed, len(s.failed), len(s.skipped))
	if len(s.skipped) > 0 {
		fmt.Fprintln(s.w, "skipped:")
		for _, sk := range s.skipped {
			fmt.Fprintf(s.w, "  %s\n", sk)
		}
	}
	if len(s.leftOut) > 0 {
		fmt.Fprintln(s.w, "passed with a part left out:")
		for _, l := range s.leftOut {
			fmt.Fprintf(s.w, "  %s\n", l)
		}
	}
	if len(s.failed) > 0 || goStatus != 0 {
		return 1
	}
	return 0
}
