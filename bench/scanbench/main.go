// Command scanbench measures the engine's budgets on loopback fixture sites and
// prints a markdown table for docs/benchmarks.md:
//
//	go run ./bench/scanbench            (or: make bench)
//
// - full scan of the peer's small site: wall time (p50/p90 over -n runs), requests, rounds;
// - the same with 100 ms added to every response;
// - a hung site: time to site_unreachable with the default limits;
// - 100 concurrent scans of the fixture sites: peak RSS of this process;
// - the CLI as a process (build, then exec) on the small site, for a like-for-like comparison with the peer's 2.8 s.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/agentready/agentready/bench/internal/benchkit"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/fixture"
)

var (
	runs  = flag.Int("n", 50, "runs per timing")
	sites = filepath.Join("testdata", "sites")
)

func scanner() *engine.Scanner {
	return engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
}

func timeScans(sc *engine.Scanner, url string, n int) (p50, p90 time.Duration, st *engine.Stats) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		_, s, err := sc.ScanWithStats(context.Background(), url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ds = append(ds, time.Since(start))
		st = s
	}
	return benchkit.Pct(ds, 0.5), benchkit.Pct(ds, 0.9), st
}

func main() {
	flag.Parse()
	benchkit.Header("")
	sc := scanner()

	peer := benchkit.Must(fixture.Start(filepath.Join(sites, "peer")))
	defer peer.Close()
	timeScans(sc, peer.URL, 3) // warm the connection pool
	p50, p90, st := timeScans(sc, peer.URL, *runs)
	fmt.Printf("| small site (peer's test site), in-process scan, %d runs | ≤ 140 ms, ≤ 30 requests | p50 %s, p90 %s; %d requests in %d rounds |\n", *runs, p50.Round(10*time.Microsecond), p90.Round(10*time.Microsecond), st.Requests, st.Rounds)

	slow := benchkit.Must(fixture.Start(filepath.Join(sites, "peer"), fixture.WithDelay(100*time.Millisecond)))
	defer slow.Close()
	n := *runs / 5
	if n < 3 {
		n = 3
	}
	p50, p90, st = timeScans(sc, slow.URL, n)
	fmt.Printf("| same site, +100 ms per response, %d runs | ≤ 700 ms, ≤ 5 rounds | p50 %s, p90 %s; %d rounds |\n", n, p50.Round(time.Millisecond), p90.Round(time.Millisecond), st.Rounds)

	full := benchkit.Must(fixture.Start(filepath.Join(sites, "full"), fixture.WithDelay(100*time.Millisecond)))
	defer full.Close()
	p50, _, st = timeScans(sc, full.URL, n)
	fmt.Printf("| full site (MCP handshake, catalog, feeds), +100 ms per response | ≤ 5 rounds | p50 %s; %d requests in %d rounds |\n", p50.Round(time.Millisecond), st.Requests, st.Rounds)

	hung := benchkit.Must(fixture.StartHung())
	start := time.Now()
	_, err := scanner().Scan(context.Background(), hung.URL, nil)
	code := "no error"
	if se, ok := err.(*engine.ScanError); ok {
		code = se.Code
	}
	fmt.Printf("| hung site (accepts, never answers), default limits (5 s/request, 20 s/scan) | site_unreachable within the deadline | %s after %s |\n", code, time.Since(start).Round(10*time.Millisecond))
	hung.Close()

	var servers []*fixture.Site
	for _, name := range []string{"full", "peer", "partial", "empty", "soft404"} {
		s := benchkit.Must(fixture.Start(filepath.Join(sites, name)))
		defer s.Close()
		servers = append(servers, s)
	}
	runtime.GC()
	before := benchkit.PeakRSSMB()
	var wg sync.WaitGroup
	start = time.Now()
	errs := 0
	var mu sync.Mutex
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := sc.Scan(context.Background(), servers[i%len(servers)].URL, nil); err != nil {
				mu.Lock()
				errs++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	fmt.Printf("| 100 concurrent scans of 5 fixture sites, one process (servers in the same process) | < 200 MB RSS | peak RSS %.0f MB (%.0f MB before), %s, %d errors |\n", benchkit.PeakRSSMB(), before, time.Since(start).Round(time.Millisecond), errs)

	bin := filepath.Join(os.TempDir(), "agentready-bench")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/agentready").CombinedOutput(); err != nil {
		fmt.Fprintln(os.Stderr, string(out))
		os.Exit(1)
	}
	var ds []time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		if out, err := exec.Command(bin, "scan", "--json", peer.URL).CombinedOutput(); err != nil {
			fmt.Fprintln(os.Stderr, string(out), err)
			os.Exit(1)
		}
		ds = append(ds, time.Since(start))
	}
	fmt.Printf("| `agentready scan --json` as a process on the small site, 20 runs | ≥ 20× faster than the peer's 2.8 s (≤ 140 ms) | p50 %s, p90 %s |\n", benchkit.Pct(ds, 0.5).Round(100*time.Microsecond), benchkit.Pct(ds, 0.9).Round(100*time.Microsecond))
}
