// Command planbench measures what the gather plan costs each fixture site:
// requests, the dependent rounds the session reports, and the wall time of a
// scan with 100 ms added to every response over h2/TLS (where a round is one
// wave of streams, so the time shows the rounds really waited for, whatever
// the accounting says). It prints markdown rows for docs/benchmarks.md:
//
//	go run ./bench/planbench [-n 5] [site ...]
//
// The default sites are the well-behaved fixtures; hostile and drip sites
// measure the fetcher's limits, not the plan.
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
	runs := flag.Int("n", 5, "scans per site (the median is reported)")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		names = []string{"empty", "full", "partial", "peer", "soft404"}
	}
	fmt.Println("| fixture site | requests | rounds | +100 ms per response, h2/TLS, median |")
	fmt.Println("|---|---|---|---|")
	for _, name := range names {
		dir := filepath.Join("testdata", "sites", name)
		if _, err := os.Stat(dir); err != nil {
			fmt.Fprintf(os.Stderr, "planbench: no fixture site %s (run from the repository root)\n", dir)
			os.Exit(2)
		}
		site := benchkit.Must(fixture.Start(dir, fixture.WithDelay(100*time.Millisecond), fixture.WithTLS()))
		sc := benchkit.LoopbackScanner(site, fetch.Config{})
		var walls []time.Duration
		var st *engine.Stats
		for range *runs {
			start := time.Now()
			_, s, err := sc.ScanWithStats(context.Background(), site.URL, nil)
			if err != nil {
				fmt.Fprintf(os.Stderr, "planbench: %s: %v\n", filepath.Base(dir), err)
				os.Exit(1)
			}
			walls = append(walls, time.Since(start))
			st = s
		}
		site.Close()
		slices.Sort(walls)
		fmt.Printf("| %s | %d | %d | %s |\n", filepath.Base(dir), st.Requests, st.Rounds, walls[len(walls)/2].Round(time.Millisecond))
	}
}
