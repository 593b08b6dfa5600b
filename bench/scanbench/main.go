// Command scanbench measures the engine's budgets on loopback fixture sites and
// prints a markdown table for docs/benchmarks.md:
//
//		go run ./bench/scanbench            (or: make bench)
//
//	  - full scan of the peer's small site: wall time (p50/p90 over -n runs), requests, rounds;
//	  - the same with 100 ms added to every response, over HTTP/1.1 and over h2/TLS
//	    (-latency runs only these rows: go run ./bench/scanbench -latency);
//	  - a hung site: time to site_unreachable with the default limits;
//	  - 100 concurrent scans of the fixture sites: peak RSS of this process;
//	  - the CLI as a process (build, then exec) on the small site, for a like-for-like comparison with the peer's 2.8 s.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
)

var (
	runs    = flag.Int("n", 50, "runs per timing")
	latency = flag.Bool("latency", false, "only the +100 ms rows, over HTTP/1.1 and h2/TLS")
	perHost = flag.Int("perhost", 0, "HTTP/1.1 per-host concurrency cap (0: the default)")
	sites   = filepath.Join("testdata", "sites")
)

func scanner() *engine.Scanner {
	return engine.New(engine.Options{Fetch: fetch.Config{PerHost: *perHost, Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
}

// tlsScanner trusts the fixture's httptest certificate.
func tlsScanner(site *fixture.Site) *engine.Scanner {
	return benchkit.LoopbackScanner(site, fetch.Config{PerHost: *perHost})
}

// latencyRows scans the peer and full fixture sites with 100 ms added to every
// response, over plain HTTP/1.1 and over h2/TLS. With every request of a
// round in flight at once, a scan takes its dependent rounds × 100 ms; the
// target allows 10% on top.
func latencyRows(n int) {
	const delay = 100 * time.Millisecond
	for _, name := range []string{"peer", "full"} {
		for _, proto := range []string{"HTTP/1.1", "h2/TLS"} {
			opts := []fixture.Option{fixture.WithDelay(delay)}
			if proto == "h2/TLS" {
				opts = append(opts, fixture.WithTLS())
			}
			site := benchkit.Must(fixture.Start(filepath.Join(sites, name), opts...))
			sc := scanner()
			if proto == "h2/TLS" {
				sc = tlsScanner(site)
			}
			p50, p90, st := timeScans(sc, site.URL, n)
			protos := map[string]int{}
			for _, r := range st.Records {
				protos[r.Proto]++
			}
			target := time.Duration(st.Rounds) * delay * 11 / 10
			verdict := "met"
			if p50 > target {
				verdict = "missed"
			}
			fmt.Printf("| %s site, +100 ms per response, %s, %d runs | ≤ %d rounds × 100 ms + 10%% = %s | p50 %s, p90 %s; %d requests in %d rounds (%s); target %s |\n",
				name, proto, n, st.Rounds, target, p50.Round(time.Millisecond), p90.Round(time.Millisecond), st.Requests, st.Rounds, protoSummary(protos), verdict)
			site.Close()
		}
	}
}

func protoSummary(m map[string]int) string {
	s := ""
	for p, n := range m {
		if p == "" {
			p = "no response"
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d over %s", n, p)
	}
	return s
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
	n := *runs / 5
	if n < 3 {
		n = 3
	}
	if *latency {
		latencyRows(n)
		return
	}
	sc := scanner()

	peer := benchkit.Must(fixture.Start(filepath.Join(sites, "peer")))
	defer peer.Close()
	timeScans(sc, peer.URL, 3) // warm the connection pool
	p50, p90, st := timeScans(sc, peer.URL, *runs)
	fmt.Printf("| small site (peer's test site), in-process scan, %d runs | ≤ 140 ms, ≤ 30 requests | p50 %s, p90 %s; %d requests in %d rounds |\n", *runs, p50.Round(10*time.Microsecond), p90.Round(10*time.Microsecond), st.Requests, st.Rounds)

	latencyRows(n)

	hung := benchkit.Must(fixture.StartHung())
	start := time.Now()
	_, err := scanner().Scan(context.Background(), hung.URL, nil)
	code := "no error"
	if se, ok := err.(*apierr.Error); ok {
		code = string(se.Code)
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
