// Command monitorio measures what the embedded store writes to disk per
// monitor run under a steady, low-rate workload, as an operator would
// measure it: it runs the real `agentready serve` (the embedded store, no
// REDIS_URL) as a child process, creates monitors through the HTTP API,
// lets them run, and reads the child's write_bytes from /proc/PID/io
// before and after a window of runs.
//
//	go run ./bench/monitorio                          (or: make bench-monitorio)
//	go run ./bench/monitorio -monitors 100 -cadence 2s -runs 500 -budget 64
//	go run ./bench/monitorio -bin /tmp/ar -keep
//
// The shortest cadence a caller may ask for is 15 minutes; the service's
// documented setting AGENTREADY_MONITOR_MIN_CADENCE lowers it for the
// child (and AGENTREADY_MONITORS_ANONYMOUS lets one anonymous caller hold
// -monitors of them). The fixture sites (testdata/sites) and the webhook
// receiver run in this process on loopback, so what the child writes is
// the store's (and whatever else the service writes: nothing, when it
// runs right).
//
// Runs are counted by the receiver: every run of a fixture site produces
// a report, so exactly one scan.completed delivery (a score.changed only
// when the score moves, which a fixture's does not). The window starts
// after -warmup runs (every monitor's first run writes its records for the
// first time) and ends after -runs more. It prints KB (1,024 bytes) per
// run and exits 1 when that is over -budget.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/internal/testing/fixture"
)

var (
	bin      = flag.String("bin", "", "the agentready binary to run (empty: go build ./cmd/agentready into a temporary directory)")
	monitors = flag.Int("monitors", 100, "monitors to create")
	cadence  = flag.Duration("cadence", 2*time.Second, "their cadence (AGENTREADY_MONITOR_MIN_CADENCE is set to it for the child)")
	nSites   = flag.Int("sites", 1, "fixture sites the monitors are spread over (round robin over full, peer, partial, empty, soft404)")
	runs     = flag.Int("runs", 500, "runs in the measured window")
	warmup   = flag.Int("warmup", 0, "runs before the window opens (0: two per monitor)")
	budget   = flag.Float64("budget", 64, "KB written per run above which the bench fails")
	timeout  = flag.Duration("timeout", 5*time.Minute, "give up after this long")
	keep     = flag.Bool("keep", false, "keep the data directory and print where it is")
	logTo    = flag.String("log", "", "copy serve's output to this file (written by this process, so not counted)")
)

var kinds = []string{"full", "peer", "partial", "empty", "soft404"}

func main() {
	flag.Parse()
	if *monitors < 1 || *runs < 1 || *nSites < 1 || *cadence <= 0 {
		fmt.Fprintln(os.Stderr, "monitorio: -monitors, -runs, -sites and -cadence must be above 0")
		os.Exit(2)
	}
	if *warmup <= 0 {
		*warmup = 2 * *monitors
	}
	os.Exit(run())
}

func run() int {
	sitesDir := filepath.Join("testdata", "sites")
	if _, err := os.Stat(sitesDir); err != nil {
		fmt.Fprintln(os.Stderr, "monitorio: run it from the repository root (it serves testdata/sites): go run ./bench/monitorio")
		return 2
	}
	if _, err := os.Stat("/proc/self/io"); err != nil {
		fmt.Fprintln(os.Stderr, "monitorio: needs Linux's /proc/PID/io")
		return 2
	}
	tmp := benchkit.Must(os.MkdirTemp("", "monitorio-"))
	if *keep {
		fmt.Fprintln(os.Stderr, "data directory kept:", filepath.Join(tmp, "data"))
	} else {
		defer os.RemoveAll(tmp)
	}
	exe := *bin
	if exe == "" {
		exe = filepath.Join(tmp, "agentready")
		fmt.Fprintln(os.Stderr, "building ./cmd/agentready …")
		b := exec.Command("go", "build", "-o", exe, "./cmd/agentready")
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "monitorio: go build:", err)
			return 1
		}
	}

	var sites []*fixture.Site
	for i := 0; i < *nSites; i++ {
		s := benchkit.Must(fixture.Start(filepath.Join(sitesDir, kinds[i%len(kinds)])))
		defer s.Close()
		sites = append(sites, s)
	}
	rcv := &receiver{seen: map[string]bool{}}
	rsrv := httptest.NewServer(rcv)
	defer rsrv.Close()

	// The child: `agentready serve` on a free loopback port, the embedded
	// store in a fresh directory, the edge native (no bin/edge.wasm needed).
	ln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	cmd := exec.Command(exe, "serve", "--addr", addr, "--data", filepath.Join(tmp, "data"), "--allow-private", "--edge-wasm", "")
	cmd.Env = childEnv()
	logs := &tail{}
	var out io.Writer = logs
	if *logTo != "" {
		f := benchkit.Must(os.Create(*logTo))
		defer f.Close()
		out = io.MultiWriter(logs, f)
	}
	cmd.Stdout, cmd.Stderr = out, out // pipes: nothing the child logs reaches its write_bytes
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "monitorio: starting serve:", err)
		return 1
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "monitorio: "+format+"\n", a...)
		fmt.Fprintf(os.Stderr, "serve's last output:\n%s\n", logs.String())
		stop()
		return 1
	}
	deadline := time.Now().Add(*timeout)
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fail("serve exited at start: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail("serve did not answer /healthz")
		}
	}

	load0 := benchkit.LoadAverage(3)
	io0 := procIO(pid)
	for i := 0; i < *monitors; i++ {
		body, _ := json.Marshal(map[string]string{"url": sites[i%len(sites)].URL, "callback_url": rsrv.URL + "/hook", "cadence": cadence.String()})
		resp, err := client.Post(base+"/api/monitors", "application/json", bytes.NewReader(body))
		if err != nil {
			return fail("creating monitor %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fail("creating monitor %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	created := procIO(pid)

	// The fixture sites log every request; forget them as the bench goes.
	waitRuns := func(n int) bool {
		for rcv.count() < n {
			if time.Now().After(deadline) {
				return false
			}
			for _, s := range sites {
				s.ResetHits()
			}
			time.Sleep(20 * time.Millisecond) // polling a counter the receiver bumps, with a deadline
		}
		return true
	}
	if !waitRuns(*warmup) {
		return fail("only %d runs after %s (warm-up %d)", rcv.count(), *timeout, *warmup)
	}
	n0, w0, t0, cpu0 := rcv.count(), procIO(pid), time.Now(), procCPU(pid)
	if !waitRuns(n0 + *runs) {
		return fail("only %d runs in the window after %s", rcv.count()-n0, *timeout)
	}
	n1, w1, t1, cpu1 := rcv.count(), procIO(pid), time.Now(), procCPU(pid)
	load1 := benchkit.LoadAverage(3)
	stop()
	size := fileSize(filepath.Join(tmp, "data", "agentready.db"))

	n := float64(n1 - n0)
	wrote := float64(w1["write_bytes"] - w0["write_bytes"])
	perRun := wrote / 1024 / n
	secs := t1.Sub(t0).Seconds()
	fmt.Printf("Measured %s on %s/%s, %d CPUs, %s; `agentready serve` (embedded store) as a child process, fixture sites and receiver in this process on loopback; load average %s at the start, %s at the end.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load0, load1)
	fmt.Printf("%d monitors at a %s cadence over %d site(s); window after %d warm-up runs\n\n", *monitors, *cadence, len(sites), n0)
	fmt.Println("| measurement | budget | result |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| runs in the window | %d | %d in %.1f s (%.1f/s) |\n", *runs, n1-n0, secs, n/secs)
	fmt.Printf("| written per run (/proc/PID/io write_bytes) | ≤ %.0f KB | **%.1f KB** (%.1f MB in all) |\n", *budget, perRun, wrote/(1<<20))
	fmt.Printf("| write calls per run (syscw) | — | %.1f |\n", float64(w1["syscw"]-w0["syscw"])/n)
	fmt.Printf("| serve's CPU per run | — | %.2f ms |\n", (cpu1-cpu0).Seconds()*1000/n)
	fmt.Printf("| creating the %d monitors wrote | — | %.0f KB |\n", *monitors, float64(created["write_bytes"]-io0["write_bytes"])/1024)
	fmt.Printf("| data file at the end | — | %.1f MB |\n", float64(size)/(1<<20))
	if perRun > *budget {
		fmt.Fprintf(os.Stderr, "monitorio: %.1f KB per run is over the budget of %.0f KB\n", perRun, *budget)
		return 1
	}
	return 0
}

// childEnv is this process's environment without REDIS_URL (the embedded
// store), with the monitors' minimum cadence and an anonymous caller's
// allowance of monitors opened up for the bench.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "REDIS_URL", "AGENTREADY_MONITOR_MIN_CADENCE", "AGENTREADY_MONITORS_ANONYMOUS", "AGENTREADY_DATA", "AGENTREADY_ROLE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AGENTREADY_MONITOR_MIN_CADENCE="+cadence.String(), "AGENTREADY_MONITORS_ANONYMOUS="+strconv.Itoa(*monitors))
}

// receiver counts the distinct scan.completed events delivered to it: one
// per run.
type receiver struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&ev) == nil && ev.Type == "scan.completed" {
		r.mu.Lock()
		r.seen[ev.ID] = true
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// procIO reads /proc/pid/io.
func procIO(pid int) map[string]int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitorio:", err)
		os.Exit(1)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); ok && err == nil {
			out[k] = n
		}
	}
	return out
}

// procCPU is pid's user+system time so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces), from its closing parenthesis.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tail keeps the last 8 KB of what the child wrote, for an error message.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8192 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-8192:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
