package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// serveFullSite serves testdata/sites/full (the fixture that does nearly
// everything right: JSON-LD, a deferred script registering a WebMCP tool)
// as a plain static site.
func serveFullSite(tb testing.TB) *httptest.Server {
	tb.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "testdata", "sites", "full")
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		tb.Fatal(err)
	}
	files := http.FileServer(http.Dir(dir))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(strings.ReplaceAll(string(index), "{{ORIGIN}}", srv.URL)))
			return
		}
		files.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// warmUp starts the browser and waits until every tab is prepared.
func warmUp(tb testing.TB, p *Pool, url string) {
	tb.Helper()
	if _, err := p.Screenshot(context.Background(), url, ScreenshotOptions{}); err != nil {
		tb.Fatal(err)
	}
	waitWarm(tb, p)
}

// waitWarm waits until the pool has all its tabs prepared and no tab is
// being disposed of.
func waitWarm(tb testing.TB, p *Pool) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		p.mu.Lock()
		in := p.inst
		p.mu.Unlock()
		if in != nil && len(in.warm) == cap(in.warm) && in.disposing.Load() == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("the pool did not prepare its tabs within 90 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkWarmScreenshot: a capture of the full fixture's homepage on a
// warm pool (browser started, every tab prepared, nothing being disposed of),
// as when captures follow scans one by one.
func BenchmarkWarmScreenshot(b *testing.B) { benchScreenshots(b, true) }

// BenchmarkBackToBackScreenshot: captures one right after the other, so each
// competes for the two cores with the disposal of the previous tab and the
// preparation of its replacement.
func BenchmarkBackToBackScreenshot(b *testing.B) { benchScreenshots(b, false) }

func benchScreenshots(b *testing.B, warm bool) {
	srv := serveFullSite(b)
	p := newTestPool(b, Config{Logf: func(string, ...any) {}})
	warmUp(b, p, srv.URL+"/")
	var durs []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if warm {
			b.StopTimer()
			waitWarm(b, p)
			b.StartTimer()
		}
		t0 := time.Now()
		img, err := p.Screenshot(context.Background(), srv.URL+"/", ScreenshotOptions{})
		if err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t0))
		b.SetBytes(int64(len(img)))
	}
	b.StopTimer()
	b.ReportMetric(float64(pct(durs, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(durs, 0.9).Microseconds())/1000, "p90-ms")
}

// BenchmarkConcurrentCaptures50: 50 captures asked for at once (4 tabs, the
// rest queued), with the memory of the browser's process tree and of this
// process sampled every 20 ms.
func BenchmarkConcurrentCaptures50(b *testing.B) {
	srv := serveFullSite(b)
	p := newTestPool(b, Config{Tabs: benchTabs(), Queue: 64, Logf: func(string, ...any) {}})
	warmUp(b, p, srv.URL+"/")
	var peakRSS, peakPSS, peakGo int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			pid := p.browserPID()
			peakRSS = max(peakRSS, treeRSS(pid))
			peakPSS = max(peakPSS, treePSS(pid))
			peakGo = max(peakGo, processRSS(os.Getpid()))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var wall []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for j := 0; j < 50; j++ {
			wg.Go(func() {
				if _, err := p.Screenshot(context.Background(), srv.URL+"/", ScreenshotOptions{}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		wall = append(wall, time.Since(t0))
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-sampled
	b.ReportMetric(float64(pct(wall, 0.5).Milliseconds()), "wall-ms")
	b.ReportMetric(float64(peakRSS>>20), "peak-browser-rss-MB")
	b.ReportMetric(float64(peakPSS>>20), "peak-browser-pss-MB")
	b.ReportMetric(float64(peakGo>>20), "peak-go-rss-MB")
	if h := p.Health(); h.Restarts != 0 {
		b.Errorf("the browser restarted during the run: %+v", h)
	}
}

// benchTabs is BENCH_TABS, or the default.
func benchTabs() int {
	n, _ := strconv.Atoi(os.Getenv("BENCH_TABS"))
	return n
}

// BenchmarkSecondBrowser measures what the paid pool's own Chromium costs
// beside the background pool's (origin: Browser and its Sibling with two
// tabs), as proportional set size, which divides the pages both browsers
// share (the binary) between them: the background browser alone, warm
// (started, every tab prepared); both warm, and the second's share of that;
// then the second's peak while it renders the full fixture two at a time
// (its two tabs busy), sampled every 20 ms.
func BenchmarkSecondBrowser(b *testing.B) {
	srv := serveFullSite(b)
	first := newTestPool(b, Config{Logf: func(string, ...any) {}})
	second := first.Sibling("paid", 2, 0)
	b.Cleanup(func() { second.Close() })
	settled := func(p *Pool) int64 {
		// The median of five readings 200 ms apart, once nothing is being
		// prepared or disposed of.
		waitWarm(b, p)
		var r []time.Duration
		for i := 0; i < 5; i++ {
			r = append(r, time.Duration(treePSS(p.Health().PID)))
			time.Sleep(200 * time.Millisecond)
		}
		return int64(pct(r, 0.5))
	}
	warmUp(b, first, srv.URL+"/")
	alone := settled(first)
	warmUp(b, second, srv.URL+"/")
	both := settled(first) + settled(second)
	idleSecond := settled(second)

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if m := treePSS(second.Health().PID); m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for j := 0; j < 2; j++ {
			wg.Go(func() {
				if _, err := second.Render(context.Background(), srv.URL+"/"); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	close(stop)
	<-sampled
	b.ReportMetric(float64(alone>>20), "one-idle-pss-MB")
	b.ReportMetric(float64(both>>20), "two-idle-pss-MB")
	b.ReportMetric(float64((both-alone)>>20), "second-idle-added-MB")
	b.ReportMetric(float64(idleSecond>>20), "second-idle-pss-MB")
	b.ReportMetric(float64(peak.Load()>>20), "second-busy-peak-pss-MB")
	if h := second.Health(); h.Restarts != 0 {
		b.Errorf("the second browser restarted during the run: %+v", h)
	}
}
