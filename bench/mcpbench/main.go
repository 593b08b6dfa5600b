// Command mcpbench measures the MCP server's budgets and prints a markdown table:
//
//		go run ./bench/mcpbench          (or: make bench-mcp)
//
//	  - tools/list answered by the /api/mcp handler in-process (2026-07-28 protocol): p50, p99;
//	  - scan_url over MCP (through the origin's HTTP server, no cache) against the same scan
//	    done by the engine directly, on the peer fixture site: the overhead of the MCP layer.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

func main() {
	benchkit.Header("")
	policy := fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}
	st := benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "mcpbench"))))
	sc := engine.New(engine.Options{Fetch: policy})
	srv := origin.New(origin.Config{AllowPrivate: true, CacheTTL: time.Nanosecond, Allowances: identity.Allowances{Anonymous: 1 << 30}}, st, sc)
	h := srv.MCPHandler()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	var ds []time.Duration
	if os.Getenv("CPUPROFILE") != "" {
		f := benchkit.Must(os.Create(os.Getenv("CPUPROFILE")))
		pprof.StartCPUProfile(f)
	}
	for i := 0; i < 3000; i++ {
		req := httptest.NewRequest("POST", "http://127.0.0.1/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		ds = append(ds, time.Since(t0))
		if rec.Code != 200 || !bytes.Contains(rec.Body.Bytes(), []byte(`"scan_url"`)) {
			fmt.Fprintln(os.Stderr, "tools/list failed:", rec.Code, rec.Body.String())
			os.Exit(1)
		}
	}
	if os.Getenv("CPUPROFILE") != "" {
		pprof.StopCPUProfile()
	}
	ds = ds[500:] // warm-up
	fmt.Printf("| tools/list via the /api/mcp handler, in-process, 2,500 calls | p50 ≤ 1 ms | p50 %s, p99 %s |\n", benchkit.Pct(ds, 0.5).Round(time.Microsecond), benchkit.Pct(ds, 0.99).Round(time.Microsecond))

	ln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs := benchkit.Must(client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/api/mcp", DisableStandaloneSSE: true}, nil))
	plain := engine.New(engine.Options{Fetch: policy})
	for _, delay := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
		site := benchkit.Must(fixture.Start(filepath.Join("testdata", "sites", "peer"), fixture.WithDelay(delay)))
		runs := 60
		if delay > 0 {
			runs = 15
		}
		var direct, viaMCP []time.Duration
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			if _, err := plain.Scan(context.Background(), site.URL, nil); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			direct = append(direct, time.Since(t0))
			t0 = time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scan_url", Arguments: map[string]any{"url": site.URL}})
			if err != nil || res.IsError {
				fmt.Fprintln(os.Stderr, "scan_url failed:", err)
				os.Exit(1)
			}
			viaMCP = append(viaMCP, time.Since(t0))
		}
		site.Close()
		d, m := benchkit.Pct(direct[runs/6:], 0.5), benchkit.Pct(viaMCP[runs/6:], 0.5)
		fmt.Printf("| scan_url over MCP (Go SDK client over HTTP, no cache) vs the engine's own scan, peer site +%s per response, %d pairs | overhead ≤ 5%% | engine p50 %s, scan_url p50 %s: +%s (%.1f%%) |\n",
			delay, runs-runs/6, d.Round(10*time.Microsecond), m.Round(10*time.Microsecond), (m - d).Round(10*time.Microsecond), 100*float64(m-d)/float64(d))
	}
	cs.Close()
}
