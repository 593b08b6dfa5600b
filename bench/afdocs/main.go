// Command afdocs compares agentready with AFDocs, the checker of the
// Agent-Friendly Documentation Spec (npm package afdocs, pinned to 0.22.2
// in bench/afdocs/package-lock.json), on the same fixture sites. Each site
// is served on loopback by the project's fixture server; AFDocs runs as a
// child process (node bin/afdocs.mjs check URL --format json) and agentready
// in this process, each against a fresh server so that the server's request
// log counts one tool's requests. It prints markdown for docs/benchmarks.md:
// a table of verdicts side by side (every AFDocs check, the agentready check
// that covers it per docs/checks.md's read suite, and both verdicts per
// site), then per site the wall time, the requests the server received and
// the pages each tool sampled.
//
// AFDocs is run twice per site: with its defaults (200 ms between requests,
// 3 at a time) and as fast as its flags allow (--request-delay 0, whose
// minimum is 0, and --max-concurrency 100, its maximum), so its politeness
// delay is not mistaken for slowness. Install it first, from the repository
// root:
//
//	npm ci --prefix bench/afdocs --no-audit --no-fund
//	go run ./bench/afdocs                                   (all read-* sites and docsdrip)
//	go run ./bench/afdocs -sites full,docsdrip -runs 3
//
// AFDocs declares Node >= 22 but runs on Node 20 (it uses no API newer than
// Node 20's; npm only warns EBADENGINE): -node picks the binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/internal/testing/testenv"
)

func main() {
	sites := flag.String("sites", "", "comma-separated fixture site directories, or names under testdata/sites (default: testdata/sites/read-* and testdata/sites/docsdrip)")
	runs := flag.Int("runs", 1, "runs per tool and site; wall time and requests are the median")
	node := flag.String("node", "node", "the node binary that runs AFDocs")
	delay := flag.Duration("delay", 0, "latency the fixture server adds to every response")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "afdocs: -runs must be at least 1")
		os.Exit(2)
	}
	root := testenv.RepoRoot()
	dirs, err := siteDirs(root, *sites)
	if err != nil {
		fmt.Fprintln(os.Stderr, "afdocs:", err)
		os.Exit(2)
	}
	cfg := Config{
		Node:   *node,
		Script: filepath.Join(root, ScriptPath),
		Runs:   *runs,
		Delay:  *delay,
		Modes:  Modes,
	}
	if _, err := os.Stat(cfg.Script); err != nil {
		fmt.Fprintf(os.Stderr, "afdocs: AFDocs is not installed (%v); run: npm ci --prefix bench/afdocs --no-audit --no-fund\n", err)
		os.Exit(2)
	}
	ctx := context.Background()
	results, err := Compare(ctx, cfg, dirs, func(msg string) { fmt.Fprintln(os.Stderr, msg) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "afdocs:", err)
		os.Exit(1)
	}
	benchkit.Measured(MeasuredNote(ctx, cfg))
	WriteTables(os.Stdout, cfg, results)
}

// siteDirs resolves -sites: each entry is a directory as given, else a name
// under testdata/sites; empty means the read-* sites and docsdrip.
func siteDirs(root, list string) ([]string, error) {
	sitesDir := filepath.Join(root, "testdata", "sites")
	if list == "" {
		dirs, err := filepath.Glob(filepath.Join(sitesDir, "read-*"))
		if err != nil {
			return nil, err
		}
		return append(dirs, filepath.Join(sitesDir, "docsdrip")), nil
	}
	var dirs []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		dir := s
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			dir = filepath.Join(sitesDir, s)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("no fixture site %q (neither a directory nor a name under testdata/sites)", s)
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("-sites names no site")
	}
	return dirs, nil
}
