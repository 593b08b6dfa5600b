package origin

import (
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// metrics is a small Prometheus text-format registry. Five series do not
// justify client_golang and its protobuf dependency tree.
type metrics struct {
	mu        sync.Mutex
	requests  map[[2]string]uint64 // route, status class → count
	buckets   []float64
	durCounts []uint64 // per bucket, plus +Inf
	durSum    float64
	durCount  uint64

	cacheHits, cacheMisses, scansFailed atomic.Uint64
	queued, running                     atomic.Int64
}

func newMetrics() *metrics {
	b := []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20}
	return &metrics{requests: map[[2]string]uint64{}, buckets: b, durCounts: make([]uint64, len(b)+1)}
}

func (m *metrics) request(route string, status int) {
	m.mu.Lock()
	m.requests[[2]string{route, fmt.Sprintf("%d", status)}]++
	m.mu.Unlock()
}

func (m *metrics) scanDuration(d time.Duration) {
	s := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.SearchFloat64s(m.buckets, s)
	m.durCounts[i]++
	m.durSum += s
	m.durCount++
}

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP agentready_http_requests_total HTTP requests by route and status.")
	fmt.Fprintln(w, "# TYPE agentready_http_requests_total counter")
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(w, "agentready_http_requests_total{route=%q,status=%q} %d\n", k[0], k[1], m.requests[k])
	}
	fmt.Fprintln(w, "# HELP agentready_scan_duration_seconds Duration of scans that ran (cache misses).")
	fmt.Fprintln(w, "# TYPE agentready_scan_duration_seconds histogram")
	var cum uint64
	for i, b := range m.buckets {
		cum += m.durCounts[i]
		fmt.Fprintf(w, "agentready_scan_duration_seconds_bucket{le=%q} %d\n", trimFloat(b), cum)
	}
	cum += m.durCounts[len(m.buckets)]
	fmt.Fprintf(w, "agentready_scan_duration_seconds_bucket{le=\"+Inf\"} %d\n", cum)
	fmt.Fprintf(w, "agentready_scan_duration_seconds_sum %g\nagentready_scan_duration_seconds_count %d\n", m.durSum, m.durCount)
	fmt.Fprintln(w, "# HELP agentready_scan_cache_hits_total Scans answered from the cache.")
	fmt.Fprintln(w, "# TYPE agentready_scan_cache_hits_total counter")
	fmt.Fprintf(w, "agentready_scan_cache_hits_total %d\n", m.cacheHits.Load())
	fmt.Fprintln(w, "# HELP agentready_scan_cache_misses_total Scans that had to run.")
	fmt.Fprintln(w, "# TYPE agentready_scan_cache_misses_total counter")
	fmt.Fprintf(w, "agentready_scan_cache_misses_total %d\n", m.cacheMisses.Load())
	fmt.Fprintln(w, "# HELP agentready_scans_failed_total Scans that ended in an error (unreachable, canceled).")
	fmt.Fprintln(w, "# TYPE agentready_scans_failed_total counter")
	fmt.Fprintf(w, "agentready_scans_failed_total %d\n", m.scansFailed.Load())
	fmt.Fprintln(w, "# HELP agentready_scan_queue_depth Scans waiting for a worker.")
	fmt.Fprintln(w, "# TYPE agentready_scan_queue_depth gauge")
	fmt.Fprintf(w, "agentready_scan_queue_depth %d\n", m.queued.Load())
	fmt.Fprintln(w, "# HELP agentready_scans_running Scans holding a worker.")
	fmt.Fprintln(w, "# TYPE agentready_scans_running gauge")
	fmt.Fprintf(w, "agentready_scans_running %d\n", m.running.Load())
}

func trimFloat(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%g", f)
}
