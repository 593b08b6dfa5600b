// Command originbench measures the origin's budgets on loopback and prints a
// markdown table for docs/benchmarks.md:
//
//	go run ./bench/originbench            (or: make bench-origin; REDIS_URL adds the Redis rows)
//
// - cached scan JSON: requests per second from a fasthttp load generator (64 connections, 5 s);
// - 200 concurrent SSE scans of the fixture sites: errors and peak RSS of the process;
// - idempotency lookup (replay path) p50/p99 against Redis on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/sse"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

var duration = flag.Duration("d", 5*time.Second, "load duration")

func startOrigin(st store.Backend) (string, func()) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
	srv := origin.New(origin.Config{AllowPrivate: true}, st, sc)
	ln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Shutdown(context.Background()) }
}

func main() {
	flag.Parse()
	benchkit.Header("; load generator in the same process")
	sites := filepath.Join("testdata", "sites")
	full := benchkit.Must(fixture.Start(filepath.Join(sites, "full")))
	defer full.Close()

	backends := []struct {
		name string
		st   store.Backend
	}{{"embedded", benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "originbench"))))}}
	if u := os.Getenv("REDIS_URL"); u != "" {
		r := benchkit.Must(store.OpenRedis(context.Background(), u))
		backends = append(backends, struct {
			name string
			st   store.Backend
		}{"redis", r.WithPrefix(fmt.Sprintf("originbench:%d:", time.Now().UnixNano()))})
	}
	for _, b := range backends {
		base, stop := startOrigin(b.st)
		target := base + "/api/scan?format=json&url=" + url.QueryEscape(full.URL)
		resp := benchkit.Must(http.Get(target))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rps, errs := benchkit.Load(target, 64, *duration)
		fmt.Printf("| cached scan JSON (17 KB), %s state, 64 connections, %s | ≥ 20k req/s | %.0f req/s, %d errors |\n", b.name, *duration, rps, errs)
		stop()
	}

	// 200 concurrent SSE scans (fresh=1) of five fixture sites. Concurrent
	// scans of one site share a flight (docs/benchmarks.md, "One scan path"),
	// so this is five scans whose events fan out to 200 streams.
	base, stop := startOrigin(backends[0].st)
	var servers []*fixture.Site
	for _, name := range []string{"full", "peer", "partial", "empty", "soft404"} {
		s := benchkit.Must(fixture.Start(filepath.Join(sites, name)))
		defer s.Close()
		servers = append(servers, s)
	}
	runtime.GC()
	before := benchkit.PeakRSSMB()
	var wg sync.WaitGroup
	var failed, completed atomic.Int64
	start := time.Now()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := client.Get(base + "/api/scan?fresh=1&url=" + url.QueryEscape(servers[i%len(servers)].URL))
			if err != nil {
				failed.Add(1)
				return
			}
			defer resp.Body.Close()
			r := sse.NewReader(resp.Body)
			for {
				e, err := r.Next()
				if err != nil {
					failed.Add(1)
					return
				}
				if e.Name == origin.EventCompleted {
					completed.Add(1)
					return
				}
				if e.Name == origin.EventError {
					failed.Add(1)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	fmt.Printf("| 200 concurrent SSE scans (fresh) of 5 fixture sites, one process | no errors, RSS ≤ 300 MB | %d completed, %d errors in %s; peak RSS %.0f MB (%.0f MB before) |\n", completed.Load(), failed.Load(), time.Since(start).Round(time.Millisecond), benchkit.PeakRSSMB(), before)
	stop()

	for _, b := range backends {
		idem := b.st.Idempotency()
		ctx := context.Background()
		if c, _, _ := idem.Begin(ctx, "bench", "k", "fp", time.Minute); c != nil { // else a previous run's record is there
			idem.Complete(ctx, c, store.IdemRecord{Fingerprint: "fp", Status: 200, Body: make([]byte, 8<<10)}, time.Hour)
		}
		var ds []time.Duration
		for i := 0; i < 20000; i++ {
			t0 := time.Now()
			if _, ex, err := idem.Begin(ctx, "bench", "k", "fp", time.Minute); err != nil || ex == nil {
				fmt.Fprintln(os.Stderr, "idempotency lookup failed:", err)
				os.Exit(1)
			}
			ds = append(ds, time.Since(t0))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		fmt.Printf("| idempotency lookup (replay of an 8 KiB response), %s state, 20k sequential | p99 ≤ 1 ms (Redis) | p50 %s, p99 %s |\n", b.name, ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)*99/100].Round(time.Microsecond))
	}
}
