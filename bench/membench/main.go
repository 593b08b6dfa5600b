// Command membench measures the scanner's memory under hostile sites and
// prints a markdown table for docs/benchmarks.md:
//
//	go run ./bench/membench [-scans 256] [-sites 8]
//
// The hostile sites run in a child process (this program started again with
// -serve), so the peak resident set measured is the scanner's alone: one
// engine.Scanner (one connection pool, one body budget, as the origin's worker
// pool shares) runs -scans scans at once, spread over -sites sites that answer
// every path with an endless body, or with a gzip bomb (1 GiB of zeros in
// 1 MiB), or a mix of both with pages that drip forever.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
)

var (
	serve  = flag.String("serve", "", "internal: serve -sites hostile sites of this kind and print their URLs")
	scans  = flag.Int("scans", 256, "concurrent scans")
	nsites = flag.Int("sites", 8, "hostile sites the scans are spread over")
	kinds  = flag.String("kinds", "endless,gzip-bomb,mixed", "site kinds to measure, one table row each")
	prof   = flag.String("memprofile", "", "write an allocation profile of the last kind measured to this file")
)

// hostile is a site whose every path answers with behavior (mixed: the
// homepage is endless, the rest alternate bombs and drips).
func hostile(kind string) fixture.Config {
	switch kind {
	case "mixed":
		return fixture.Config{Routes: map[string]fixture.Route{
			"/":                            {Behavior: "endless"},
			"/llms.txt":                    {Behavior: "gzip-bomb"},
			"/openapi.json":                {Behavior: "gzip-bomb"},
			"/docs":                        {Behavior: "drip", Body: "<!doctype html><title>Docs</title>", Drip: "50ms"},
			"/robots.txt":                  {Behavior: "endless"},
			"/sitemap.xml":                 {Behavior: "gzip-bomb"},
			"/.well-known/agent-card.json": {Behavior: "slow-body"},
			"*":                            {Behavior: "endless"},
		}}
	default:
		return fixture.Config{Routes: map[string]fixture.Route{"*": {Behavior: kind}}}
	}
}

func main() {
	flag.Parse()
	if *serve != "" {
		serveSites(*serve, *nsites)
		return
	}
	d := fetch.Defaults()
	benchkit.Header(fmt.Sprintf("; %d concurrent scans over %d loopback sites served by a child process; default limits (%d MiB per body, %d MiB per scan, %d MiB shared beyond %d KiB free per scan)",
		*scans, *nsites, d.MaxBody>>20, d.MaxScanBytes>>20, d.SharedBodyBytes>>20, d.FreeScanBytes>>10))
	for _, kind := range strings.Split(*kinds, ",") {
		measure(kind)
	}
}

func serveSites(kind string, n int) {
	for i := 0; i < n; i++ {
		s := benchkit.Must(fixture.Start("", fixture.WithConfig(hostile(kind))))
		defer s.Close()
		fmt.Println(s.URL)
	}
	fmt.Println("ready")
	// The parent closes our stdin when it is done.
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func measure(kind string) {
	self := benchkit.Must(os.Executable())
	cmd := exec.Command(self, "-serve", kind, "-sites", fmt.Sprint(*nsites))
	stdin := benchkit.Must(cmd.StdinPipe())
	out := benchkit.Must(cmd.StdoutPipe())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		benchkit.Must(0, err)
	}
	var urls []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		urls = append(urls, sc.Text())
	}
	defer func() { stdin.Close(); cmd.Wait() }()

	scanner := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
	// The previous kind's pages go back to the system, so each row starts
	// from the same resident set.
	debug.FreeOSMemory()
	baseRSS := benchkit.RSSMB()
	var peakRSS, peakHeap atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if r := int64(benchkit.RSSMB()); r > peakRSS.Load() {
				peakRSS.Store(r)
			}
			metrics.Read(sample)
			if h := int64(sample[0].Value.Uint64() >> 20); h > peakHeap.Load() {
				peakHeap.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{} // "reports" or the failed scan's apierr code
	var slowest atomic.Int64
	for i := 0; i < *scans; i++ {
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			t0 := time.Now()
			_, err := scanner.Scan(context.Background(), u, nil)
			if d := int64(time.Since(t0)); d > slowest.Load() {
				slowest.Store(d)
			}
			what := "reports"
			var se *apierr.Error
			switch {
			case errors.As(err, &se):
				what = string(se.Code)
			case err != nil:
				what = "error"
			}
			mu.Lock()
			outcomes[what]++
			mu.Unlock()
		}(urls[i%len(urls)])
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	<-sampled
	if *prof != "" {
		f := benchkit.Must(os.Create(*prof))
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
	var parts []string
	for what, n := range outcomes {
		parts = append(parts, fmt.Sprintf("%d %s", n, what))
	}
	sort.Strings(parts)
	fmt.Printf("| %d concurrent scans of %s sites: peak RSS (scanner process; %d MB before) | < 1024 MB | %d MB (Go heap objects peak %d MB; %s; all done in %s, slowest scan %s) |\n",
		*scans, kind, int(baseRSS), peakRSS.Load(), peakHeap.Load(), strings.Join(parts, ", "), took.Round(10*time.Millisecond), time.Duration(slowest.Load()).Round(10*time.Millisecond))
}
