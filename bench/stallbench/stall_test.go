// Package stallbench measures the wazero-hosted edge while requests wait in
// host calls on an origin that does not answer: how long a document the edge
// serves itself (/llms.txt) takes then, against the same with nobody waiting.
// TestRequestsWaitingOnTheOriginDoNotStallTheEdge (wasm) proves the order
// (the document is answered while they wait); this is where its latency is
// measured:
//
//	go test ./bench/stallbench -run '^$' -bench . -benchtime 2000x -count 3
//
// The module is built from the sources in the tree (internal/testing/edgemodule);
// EDGE_WASM names another one to measure instead.
package stallbench

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/stacktest"
)

func module(b *testing.B) []byte {
	p := os.Getenv("EDGE_WASM")
	if p == "" {
		return edgemodule.Build(b)
	}
	m, err := os.ReadFile(p)
	if err != nil {
		b.Fatalf("EDGE_WASM: %v", err)
	}
	return m
}

// BenchmarkDocumentWhileRequestsWaitOnOrigin: GET /llms.txt over HTTP (one
// keep-alive connection) with 0, or more than the warm instances of, badge
// requests held by an origin that answers only when released. ns/op is the
// mean; p50-µs and p99-µs the percentiles; first-µs the first request after
// the badges took their instances (with waiting > warm, it makes an instance).
func BenchmarkDocumentWhileRequestsWaitOnOrigin(b *testing.B) {
	mod := module(b)
	warm := max(2, runtime.NumCPU()) // wasm.Options.Instances' default
	for _, waiting := range []int{0, warm + 2} {
		b.Run("waiting="+strconv.Itoa(waiting), func(b *testing.B) {
			origin := edgetest.StartHungOrigin(b)
			env := edgetest.Env()
			env["AGENTREADY_EDGE_SECRET"] = "0123456789abcdef0123456789abcdef"
			env["AGENTREADY_FREE_DAILY"] = "1000000"
			svc := stacktest.Start(b, env, stack.Options{Role: stack.RoleEdge, Origins: []string{origin.URL},
				EdgeModule: mod, CacheDir: filepath.Join(os.TempDir(), "agentready-bench-wazero")})
			client := &http.Client{Timeout: time.Minute}
			var wg sync.WaitGroup
			defer wg.Wait()
			defer origin.Release()
			for i := 0; i < waiting; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp, err := client.Get(svc.URL + "/api/badge?url=" + url.QueryEscape("https://never-scanned.example/"+strconv.Itoa(i))); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}()
			}
			for deadline := time.Now().Add(30 * time.Second); origin.Waiting() < int32(waiting); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d badges reached the origin", origin.Waiting(), waiting)
				}
			}
			get := func() time.Duration {
				t0 := time.Now()
				resp, err := client.Get(svc.URL + "/llms.txt")
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("/llms.txt: %d", resp.StatusCode)
				}
				return time.Since(t0)
			}
			first := get()
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				ds = append(ds, get())
			}
			b.StopTimer()
			if origin.Waiting() != int32(waiting) {
				b.Fatalf("%d badges still held of %d: the measurement is not of a stalled edge", origin.Waiting(), waiting)
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
			b.ReportMetric(us(ds[len(ds)/2]), "p50-µs")
			b.ReportMetric(us(ds[(len(ds)-1)*99/100]), "p99-µs")
			b.ReportMetric(us(first), "first-µs")
		})
	}
}
