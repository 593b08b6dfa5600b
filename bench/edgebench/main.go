// Command edgebench measures the wazero-hosted edge and the rate limiter:
//
//	make wasm && go run ./bench/edgebench       (or: make bench-edge; REDIS_URL adds the Redis row)
//
// - badge answered from the edge cache, in-process through the module: p50/p99;
// - the same over HTTP from a load generator (64 connections): requests per second;
// - the module's size, raw and gzip -9;
// - a rate-limit decision (redis_rate) against Redis on loopback: p50/p99.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/origin/store"
)

func main() {
	benchkit.Header("")
	module := benchkit.Must(os.ReadFile("bin/edge.wasm"))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(module)
	zw.Close()
	fmt.Printf("| wasip1 edge module (bin/edge.wasm, -trimpath -s -w) | ≤ 2 MB gzip | %.2f MB raw, %.2f MB gzip -9 |\n", float64(len(module))/1e6, float64(gz.Len())/1e6)

	st := benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "edgebench"))))
	env := edgetest.Env()
	env["AGENTREADY_BADGE_DAILY"] = "100000000"
	svc := benchkit.Must(stack.Start(stack.Options{Addr: "127.0.0.1:0", AllowPrivate: true, Store: st, EdgeModule: module, Env: func(k string) string { return env[k] }}))
	defer svc.Shutdown(context.Background())
	site := benchkit.Must(fixture.Start(filepath.Join("testdata", "sites", "full")))
	defer site.Close()
	path := "/api/badge?url=" + url.QueryEscape(site.URL)
	resp := benchkit.Must(http.Get(svc.URL + path)) // warm the edge cache
	resp.Body.Close()

	var ds []time.Duration
	for i := 0; i < 5000; i++ {
		req := httptest.NewRequest("GET", svc.URL+path, nil)
		req.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		t0 := time.Now()
		svc.Edge.ServeHTTP(rec, req)
		ds = append(ds, time.Since(t0))
		if rec.Code != 200 {
			fmt.Fprintln(os.Stderr, "badge failed:", rec.Code)
			os.Exit(1)
		}
	}
	ds = ds[500:]
	fmt.Printf("| badge from the edge cache, in-process through the wazero-hosted module, 4,500 calls | p50 ≤ 250 µs | p50 %s, p99 %s |\n", benchkit.Pct(ds, 0.5).Round(time.Microsecond), benchkit.Pct(ds, 0.99).Round(time.Microsecond))

	rps, errs := benchkit.Load(svc.URL+path, 64, 5*time.Second)
	fmt.Printf("| badge from the edge cache over HTTP (net/http front, %d warm instances), 64 connections, 5 s | ≥ 5k req/s | %.0f req/s, %d errors |\n", max(2, runtime.NumCPU()), rps, errs)

	if u := os.Getenv("REDIS_URL"); u != "" {
		opt := benchkit.Must(redis.ParseURL(u))
		rc := redis.NewClient(opt)
		l := ratelimit.NewRedis(rc).WithPrefix(fmt.Sprintf("edgebench:%d:", time.Now().UnixNano()))
		var rs []time.Duration
		for i := 0; i < 20000; i++ {
			t0 := time.Now()
			if _, err := l.AllowN(context.Background(), fmt.Sprintf("k%d", i%64), ratelimit.PerDay(1<<30), 1); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			rs = append(rs, time.Since(t0))
		}
		fmt.Printf("| rate-limit decision (redis_rate GCRA) against Redis on loopback, 20k sequential | p99 ≤ 1 ms | p50 %s, p99 %s |\n", benchkit.Pct(rs, 0.5).Round(time.Microsecond), benchkit.Pct(rs, 0.99).Round(time.Microsecond))
		rc.Close()
	}
	l := ratelimit.NewLocal()
	var ls []time.Duration
	for i := 0; i < 20000; i++ {
		t0 := time.Now()
		l.AllowN(context.Background(), fmt.Sprintf("k%d", i%64), ratelimit.PerDay(1<<30), 1)
		ls = append(ls, time.Since(t0))
	}
	fmt.Printf("| rate-limit decision, in-process GCRA (the embedded default), 20k sequential | — | p50 %s, p99 %s |\n", benchkit.Pct(ls, 0.5).Round(10*time.Nanosecond), benchkit.Pct(ls, 0.99).Round(10*time.Nanosecond))
}
