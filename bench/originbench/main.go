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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/fixture"
	"github.com/agentready/agentready/internal/sse"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
	"github.com/valyala/fasthttp"
)

var duration = flag.Duration("d", 5*time.Second, "load duration")

func must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return v
}

func rssPeakMB() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

func startOrigin(st store.Backend) (string, func()) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}})
	srv := origin.New(origin.Config{AllowPrivate: true}, st, sc)
	ln := must(net.Listen("tcp", "127.0.0.1:0"))
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Shutdown(context.Background()) }
}

func load(target string, conns int, d time.Duration) (rps float64, errs int64) {
	c := &fasthttp.HostClient{Addr: strings.TrimPrefix(strings.SplitN(target, "/api", 2)[0], "http://"), MaxConns: conns}
	var n, bad atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(target)
			for time.Now().Before(stop) {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					bad.Add(1)
					continue
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / d.Seconds(), bad.Load()
}

func main() {
	flag.Parse()
	fmt.Printf("Measured %s on %s/%s, %d CPUs, %s; load generator in the same process.\n\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Println("| measurement | budget | result |")
	fmt.Println("|---|---|---|")
	sites := filepath.Join("testdata", "sites")
	full := must(fixture.Start(filepath.Join(sites, "full")))
	defer full.Close()

	backends := []struct {
		name string
		st   store.Backend
	}{{"embedded", must(store.OpenEmbedded(must(os.MkdirTemp("", "originbench"))))}}
	if u := os.Getenv("REDIS_URL"); u != "" {
		r := must(store.OpenRedis(context.Background(), u))
		backends = append(backends, struct {
			name string
			st   store.Backend
		}{"redis", r.WithPrefix(fmt.Sprintf("originbench:%d:", time.Now().UnixNano()))})
	}
	for _, b := range backends {
		base, stop := startOrigin(b.st)
		target := base + "/api/scan?format=json&url=" + url.QueryEscape(full.URL)
		resp := must(http.Get(target))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rps, errs := load(target, 64, *duration)
		fmt.Printf("| cached scan JSON (17 KB), %s state, 64 connections, %s | ≥ 20k req/s | %.0f req/s, %d errors |\n", b.name, *duration, rps, errs)
		stop()
	}

	// 200 concurrent SSE scans (fresh=1, so each really scans) of five fixture sites.
	base, stop := startOrigin(backends[0].st)
	var servers []*fixture.Site
	for _, name := range []string{"full", "peer", "partial", "empty", "soft404"} {
		s := must(fixture.Start(filepath.Join(sites, name)))
		defer s.Close()
		servers = append(servers, s)
	}
	runtime.GC()
	before := rssPeakMB()
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
	fmt.Printf("| 200 concurrent SSE scans (fresh) of 5 fixture sites, one process | no errors, RSS ≤ 300 MB | %d completed, %d errors in %s; peak RSS %.0f MB (%.0f MB before) |\n", completed.Load(), failed.Load(), time.Since(start).Round(time.Millisecond), rssPeakMB(), before)
	stop()

	for _, b := range backends {
		idem := b.st.Idempotency()
		ctx := context.Background()
		idem.Begin(ctx, "bench", "k", "fp", time.Minute)
		idem.Complete(ctx, "bench", "k", store.IdemRecord{Fingerprint: "fp", Status: 200, Body: make([]byte, 8<<10)}, time.Hour)
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
