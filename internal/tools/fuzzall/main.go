// Command fuzzall runs every Go fuzz target of the module briefly: the list
// is read from the test files (every func FuzzX(f *testing.F)), so a new
// target runs without being registered anywhere, and targets run -jobs at
// a time.
//
//	go run ./internal/tools/fuzzall                     (make fuzz)
//	go run ./internal/tools/fuzzall -fuzztime 60s       (make fuzz-long)
//	go run ./internal/tools/fuzzall -list               print the targets and exit
//
// Go's fuzzing engine sometimes ends a run whose time is up with a bare
// "context deadline exceeded" and no failing input (a coordinator/worker
// race on a loaded machine, not a finding): such a run is tried once more.
// A real finding writes its input under testdata/fuzz and fails the run,
// with the target's output printed in full.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

var (
	goCmd    = flag.String("go", "go", "the go command")
	fuzztime = flag.String("fuzztime", "2s", "how long each target runs (go test -fuzztime)")
	jobs     = flag.Int("jobs", max(runtime.NumCPU()/2, 1), "targets run at once (each with -parallel 2)")
	listOnly = flag.Bool("list", false, "print the targets (package:Target) and exit")
)

type target struct{ pkg, name string }

func main() {
	flag.Parse()
	targets, err := list(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzall:", err)
		os.Exit(1)
	}
	if *listOnly {
		for _, t := range targets {
			fmt.Printf("%s:%s\n", t.pkg, t.name)
		}
		return
	}
	start := time.Now()
	work := make(chan target)
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for range max(*jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				out, ok := run(t)
				mu.Lock()
				if ok {
					fmt.Printf("ok    %s %s\n", t.pkg, t.name)
				} else {
					fmt.Printf("FAIL  %s %s\n%s\n", t.pkg, t.name, out)
					failed = append(failed, t.pkg+":"+t.name)
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range targets {
		work <- t
	}
	close(work)
	wg.Wait()
	fmt.Printf("%d fuzz targets, %s each, %d at a time: %d failed, %s\n", len(targets), *fuzztime, *jobs, len(failed), time.Since(start).Round(time.Second))
	if len(failed) > 0 {
		fmt.Println("failed:", strings.Join(failed, " "))
		os.Exit(1)
	}
}

// list finds the fuzz targets of the packages (./... when none are given):
// every func FuzzX(f *testing.F) in their test files, as go test would run
// it. Reading the files is what go test -list does after building every
// test binary; go list and a regexp take a second instead of minutes.
func list(pkgs []string) ([]target, error) {
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	cmd := exec.Command(*goCmd, append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}"}, pkgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)
	var targets []target
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			continue
		}
		for _, f := range strings.Fields(parts[2]) {
			src, err := os.ReadFile(filepath.Join(parts[1], f))
			if err != nil {
				return nil, err
			}
			for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
				targets = append(targets, target{pkg: parts[0], name: string(m[1])})
			}
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no fuzz targets found in %s", strings.Join(pkgs, " "))
	}
	return targets, nil
}

// run fuzzes one target, once more when the engine timed out without a
// finding; ok false carries the output.
func run(t target) (string, bool) {
	var out []byte
	for try := 1; try <= 2; try++ {
		cmd := exec.Command(*goCmd, "test", t.pkg, "-run", "^$", "-fuzz", "^"+t.name+"$", "-fuzztime", *fuzztime, "-parallel", "2")
		var err error
		out, err = cmd.CombinedOutput()
		if err == nil {
			return "", true
		}
		if try == 1 && bytes.Contains(out, []byte("context deadline exceeded")) && !bytes.Contains(out, []byte("Failing input written")) {
			continue
		}
		break
	}
	return string(out), false
}
