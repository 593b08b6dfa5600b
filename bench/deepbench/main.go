// Command deepbench measures the paid deep scan on the fixture sites: its
// requests, dependent rounds and wall time with 100 ms added to every
// response over h2/TLS, beside the free scan of the same site (what the deep
// probes add). It prints markdown rows for docs/benchmarks.md:
//
//	go run ./bench/deepbench [-n 3] [site ...]
//
// A site is a directory under testdata/deep or testdata/sites.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
)

func main() {
	runs := flag.Int("n", 3, "scans per site (the median is reported)")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		names = []string{"full", "peer", "mcp-good", "oauth-good", "api-working", "a2a-working", "pages-good", "contract-good", "pages-404"}
	}
	benchkit.Measured("; every response delayed 100 ms, h2/TLS on loopback; median of the runs")
	fmt.Println("| fixture site | free: requests / rounds / wall | deep: requests / rounds / wall | deep probes pass/partial/fail/na |")
	fmt.Println("|---|---|---|---|")
	for _, name := range names {
		dir := filepath.Join("testdata", "deep", name)
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Join("testdata", "sites", name)
		}
		if _, err := os.Stat(dir); err != nil {
			fmt.Fprintf(os.Stderr, "deepbench: no fixture site %s under testdata/deep or testdata/sites (run from the repository root)\n", name)
			os.Exit(2)
		}
		site := benchkit.Must(fixture.Start(dir, fixture.WithDelay(100*time.Millisecond), fixture.WithTLS()))
		sc := benchkit.LoopbackScanner(site, fetch.Config{})
		free := measure(*runs, func() (*engine.Stats, error) {
			_, st, err := sc.ScanWithStats(context.Background(), site.URL, nil)
			return st, err
		})
		counts := map[string]int{}
		deep := measure(*runs, func() (*engine.Stats, error) {
			res, st, err := sc.DeepScan(context.Background(), site.URL, nil)
			if err == nil {
				clear(counts)
				for _, p := range res.Deep.Probes {
					counts[string(p.Status)]++
				}
			}
			return st, err
		})
		site.Close()
		fmt.Printf("| %s | %s | %s | %d/%d/%d/%d |\n", name, free, deep, counts["pass"], counts["partial"], counts["fail"], counts["na"])
	}
}

// measure runs scan n times and renders the last run's requests and
// rounds with the median wall time.
func measure(n int, scan func() (*engine.Stats, error)) string {
	var walls []time.Duration
	var st *engine.Stats
	for range n {
		start := time.Now()
		s, err := scan()
		if err != nil {
			fmt.Fprintf(os.Stderr, "deepbench: %v\n", err)
			os.Exit(1)
		}
		walls = append(walls, time.Since(start))
		st = s
	}
	slices.Sort(walls)
	return fmt.Sprintf("%d / %d / %s", st.Requests, st.Rounds, walls[len(walls)/2].Round(time.Millisecond))
}
