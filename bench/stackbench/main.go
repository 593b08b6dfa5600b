// Command stackbench measures the whole service as `make run` assembles it:
// the wasip1 edge module hosted by wazero in front of the origin, embedded
// state, the audit log on, and prints a markdown table for docs/benchmarks.md:
//
//	make wasm && go run ./bench/stackbench   (or: make bench-stack)
//	go run ./bench/stackbench -profile /tmp/sb   (CPU profile per row: /tmp/sb/<row>.pprof)
//	go run ./bench/stackbench -native            (the edge compiled natively, for comparison)
//
// The load generator (bench/internal/benchkit's fasthttp client) runs in a
// child process, as wrk would, so that a CPU profile of this process is the
// server's alone; the two processes share the machine's cores. Rows:
//
//   - cached scan JSON from the origin alone (the same origin the stack runs,
//     addressed directly on its loopback port);
//   - the same request through the edge (charged to the caller's allowance,
//     forwarded to the origin);
//   - a badge answered from the edge cache;
//   - /openapi.json (edge cache of an origin document) and /.well-known/api-catalog
//     (a document the edge renders).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

var (
	duration = flag.Duration("d", 5*time.Second, "load duration per row")
	conns    = flag.Int("conns", 64, "connections of the load generator")
	module   = flag.String("module", "bin/edge.wasm", "the edge module (make wasm)")
	native   = flag.Bool("native", false, "run the edge natively instead of the module")
	profile  = flag.String("profile", "", "directory for a CPU profile of the server per row")
	only     = flag.String("only", "", "run only the rows whose name contains this")
	load     = flag.String("load", "", "internal: be the load generator for this URL")
)

// result is what the load generator child reports.
type result struct {
	RPS    float64       `json:"rps"`
	Errors int64         `json:"errors"`
	CPU    time.Duration `json:"cpu"` // the load generator's own
}

func main() {
	flag.Parse()
	if *load != "" {
		rps, errs := benchkit.Load(*load, *conns, *duration)
		json.NewEncoder(os.Stdout).Encode(result{rps, errs, cpuTime()})
		return
	}
	edgeKind := "wazero-hosted edge module"
	var mod []byte
	if !*native {
		mod = benchkit.Must(os.ReadFile(*module))
	} else {
		edgeKind = "native edge"
	}
	benchkit.Header(fmt.Sprintf("; %s; load generator in a child process (fasthttp, %d connections), sharing the cores", edgeKind, *conns))

	site := benchkit.Must(fixture.Start(filepath.Join("testdata", "sites", "full")))
	defer site.Close()
	st := benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "stackbench"))))
	defer st.Close()
	devnull := benchkit.Must(os.OpenFile(os.DevNull, os.O_WRONLY, 0))
	env := edgetest.Env()
	// Allowances no run can spend: the rows measure serving, not refusing.
	for _, k := range []string{"AGENTREADY_FREE_DAILY", "AGENTREADY_TOKEN_DAILY", "AGENTREADY_KEY_DAILY", "AGENTREADY_BADGE_DAILY"} {
		env[k] = "1000000000"
	}
	svc := benchkit.Must(stack.Start(stack.Options{Addr: "127.0.0.1:0", AllowPrivate: true, Store: st, EdgeModule: mod,
		Env: func(k string) string { return env[k] }, Origin: origin.Config{CacheTTL: time.Hour, Audit: audit(devnull)}}))
	defer svc.Shutdown(context.Background())
	if svc.Wasm == *native {
		fmt.Fprintln(os.Stderr, "stackbench: the stack did not start the edge asked for")
		os.Exit(1)
	}

	scan := "/api/scan?format=json&url=" + url.QueryEscape(site.URL)
	rows := []struct{ name, base, path, what string }{
		{"origin", svc.OriginURL, scan, "cached scan JSON (17 KB), origin alone (the stack's own origin, direct)"},
		{"scan", svc.URL, scan, "cached scan JSON (17 KB) through the edge (charged, forwarded)"},
		{"badge", svc.URL, "/api/badge?url=" + url.QueryEscape(site.URL), "badge, edge cache hit"},
		{"openapi", svc.URL, "/openapi.json", "/openapi.json, edge cache hit"},
		{"catalog", svc.URL, "/.well-known/api-catalog", "/.well-known/api-catalog, rendered by the edge"},
	}
	for _, r := range rows { // warm every cache once: the scan, the badge, the documents
		warm(r.base + r.path)
	}
	if *profile != "" {
		benchkit.Must(0, os.MkdirAll(*profile, 0o755))
	}
	for _, r := range rows {
		if *only != "" && !strings.Contains(r.name, *only) {
			continue
		}
		var stop func()
		if *profile != "" {
			f := benchkit.Must(os.Create(filepath.Join(*profile, r.name+".pprof")))
			benchkit.Must(0, pprof.StartCPUProfile(f))
			stop = func() { pprof.StopCPUProfile(); f.Close() }
		}
		cpu0 := cpuTime()
		res := child(r.base + r.path)
		cpu := cpuTime() - cpu0
		if stop != nil {
			stop()
		}
		n := max(1, res.RPS*duration.Seconds())
		server, client := time.Duration(float64(cpu)/n), time.Duration(float64(res.CPU)/n)
		fmt.Printf("| %s, %d connections, %s | %s | %.0f req/s, %d errors; CPU per request: server %s, load generator %s |\n",
			r.what, *conns, *duration, budget(r.name), res.RPS, res.Errors, server.Round(100*time.Nanosecond), client.Round(100*time.Nanosecond))
	}
	if *profile != "" {
		fmt.Fprintf(os.Stderr, "profiles in %s: go tool pprof -top %s\n", *profile, filepath.Join(*profile, "scan.pprof"))
	}
}

// cpuTime is the CPU this process (the server, not the load generator) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func budget(row string) string {
	switch row {
	case "origin":
		return "≥ 20k req/s"
	case "scan", "badge":
		return "≥ 10k req/s"
	}
	return "—"
}

// audit is the audit log `agentready serve` writes (a JSON line per scan),
// to a file, as serve's stderr redirected would be.
func audit(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

func warm(target string) {
	resp := benchkit.Must(http.Get(target))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		fmt.Fprintf(os.Stderr, "stackbench: warming %s: %d\n", target, resp.StatusCode)
		os.Exit(1)
	}
}

// child runs the load generator in a process of its own.
func child(target string) result {
	self := benchkit.Must(os.Executable())
	cmd := exec.Command(self, "-load", target, "-conns", fmt.Sprint(*conns), "-d", duration.String())
	cmd.Stderr = os.Stderr
	out := benchkit.Must(cmd.Output())
	var r result
	benchkit.Must(0, json.Unmarshal(out, &r))
	return r
}
