// Package benchkit is what the benchmark programs share: the report header,
// percentiles, peak RSS, and an HTTP load generator.
package benchkit

import (
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Must exits with the error, for setup steps a benchmark cannot go on without.
func Must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return v
}

// Header prints the measurement line (date, platform, Go; note appended) and
// the head of the results table that docs/benchmarks.md takes verbatim.
func Header(note string) {
	Measured(note)
	fmt.Println("| measurement | budget | result |")
	fmt.Println("|---|---|---|")
}

// Measured prints the measurement line alone, for a program with a table of its own.
func Measured(note string) {
	fmt.Printf("Measured %s on %s/%s, %d CPUs, %s%s.\n\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), note)
}

// Pct is the p-th percentile (0–1) of d; it sorts d.
func Pct(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

// PeakRSSMB is this process's peak resident set (VmHWM) in MiB.
func PeakRSSMB() float64 { return statusMB("VmHWM:") }

// RSSMB is this process's current resident set (VmRSS) in MiB.
func RSSMB() float64 { return statusMB("VmRSS:") }

// statusMB reads one kB field of /proc/self/status, in MiB (0 when absent).
func statusMB(field string) float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, field)), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// Load sends GET target from conns connections for d; anything but a 200 is
// an error. It returns requests per second and the error count.
func Load(target string, conns int, d time.Duration) (rps float64, errs int64) {
	u := Must(url.Parse(target))
	c := &fasthttp.HostClient{Addr: u.Host, MaxConns: conns}
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

// LoadAverage is the machine's load average over the last 1, 5 and 15
// minutes, its first n figures as /proc/loadavg gives them ("unknown" where
// it cannot be read): the benchmarks share the machine, and say how busy it
// was.
func LoadAverage(n int) string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < n {
		return "unknown"
	}
	return strings.Join(f[:n], " ")
}
