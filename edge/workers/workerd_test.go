package workers_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/edgetest"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testenv"
)

const edgeSecret = "workerd-test-edge-secret-0123456789"

// requirements finds build/worker (make worker), the workerd binary pinned in
// tests/node and a Redis (Workers keep no state between requests). With
// CI=true a missing piece fails the run.
func requirements(tb testing.TB) (root, workerd, redisURL string) {
	tb.Helper()
	root = testenv.RepoRoot()
	workerd = filepath.Join(testenv.NodeDir(), "node_modules", "@cloudflare", "workerd-linux-64", "bin", "workerd")
	var missing []string
	if _, err := os.Stat(filepath.Join(root, "build", "worker", "app.wasm")); err != nil {
		missing = append(missing, "build/worker (run make worker)")
	}
	if _, err := os.Stat(workerd); err != nil {
		missing = append(missing, "workerd (run npm ci --prefix tests/node)")
	}
	if redisURL = os.Getenv("REDIS_URL"); redisURL == "" {
		missing = append(missing, "REDIS_URL")
	}
	testenv.Require(tb, missing...)
	return root, workerd, redisURL
}

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startWorkerd serves build/worker in workerd with env as text bindings and
// returns its base URL and process.
func startWorkerd(tb testing.TB, root, workerd string, env map[string]string, port int) (string, *os.Process) {
	tb.Helper()
	dir := tb.TempDir()
	for _, f := range []string{"index.mjs", "worker.mjs", "runtime.mjs", "wasm_exec.js", "app.wasm"} {
		if err := os.Symlink(filepath.Join(root, "build", "worker", f), filepath.Join(dir, f)); err != nil {
			tb.Fatal(err)
		}
	}
	var bindings []string
	for k, v := range env {
		bindings = append(bindings, fmt.Sprintf("(name = %q, text = %q)", k, v))
	}
	cache := newCacheService()
	tb.Cleanup(cache.srv.Close)
	config := fmt.Sprintf(`using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "edge", worker = .edge),
    (name = "internet", network = (allow = ["public", "private", "local"])),
    (name = "cache", external = (address = "%s", http = ())),
  ],
  sockets = [(name = "http", address = "127.0.0.1:%d", http = (), service = "edge")],
);
const edge :Workerd.Worker = (
  modules = [
    (name = "index.mjs", esModule = embed "index.mjs"),
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "runtime.mjs", esModule = embed "runtime.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "app.wasm", wasm = embed "app.wasm"),
  ],
  compatibilityDate = "2026-11-17",
  bindings = [%s],
  globalOutbound = "internet",
  cacheApiOutbound = "cache",
);
`, strings.TrimPrefix(cache.srv.URL, "http://"), port, strings.Join(bindings, ", "))
	if err := os.WriteFile(filepath.Join(dir, "config.capnp"), []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(workerd, "serve", filepath.Join(dir, "config.capnp"), "--verbose")
	logs, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var tail strings.Builder
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			if tail.Len() < 64<<10 {
				tail.WriteString(sc.Text() + "\n")
			}
		}
	}()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if tb.Failed() {
			tb.Logf("workerd output:\n%s", tail.String())
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return base, cmd.Process
		}
		if time.Now().After(deadline) {
			tb.Fatalf("workerd did not listen within 20 s:\n%s", tail.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startOrigin starts the origin (with its own embedded store) that the Worker forwards to.
func startOrigin(tb testing.TB, env map[string]string) string {
	return edgetest.StartStack(tb, env, stack.Options{}).OriginURL
}

// startService starts an origin and the Worker in front of it, configured as
// a Workers deployment is: the public base URL set for both (a Worker's fetch
// cannot pass the caller's Host on to the origin), Redis for the allowances.
func startService(tb testing.TB, env map[string]string) (string, *os.Process) {
	root, workerd, redisURL := requirements(tb)
	port := freePort(tb)
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	out["AGENTREADY_BASE_URL"] = "http://127.0.0.1:" + strconv.Itoa(port)
	out["AGENTREADY_EDGE_SECRET"] = edgeSecret
	out["REDIS_URL"] = redisURL
	// Each started service counts from zero.
	out["AGENTREADY_RATE_PREFIX"] = "workerd-test:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	out["ORIGIN_URL"] = startOrigin(tb, out)
	return startWorkerd(tb, root, workerd, out, port)
}

// The behavioural table, against the GOOS=js build in workerd — the runtime
// Cloudflare Workers run — with Redis over cloudflare:sockets and the origin over fetch.
func TestWorkerdEdge(t *testing.T) {
	requirements(t)
	edgetest.Run(t, func(t *testing.T, env map[string]string) string {
		base, _ := startService(t, env)
		return base
	})
}

// Cacheable public GETs are answered by the JS shim from the Cache API, and
// per-caller headers never go into the shared entry.
func TestWorkerdShimCache(t *testing.T) {
	base, _ := startService(t, edgetest.Env())
	get := func(path string) *http.Response {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	path := "/api/badge?url=" + "https://cache-test.example/" + strconv.FormatInt(time.Now().UnixNano(), 36)
	first := get(path)
	if first.StatusCode != 200 || first.Header.Get("X-Edge-Cache") != "" {
		t.Fatalf("first badge: %d cache=%q", first.StatusCode, first.Header.Get("X-Edge-Cache"))
	}
	// The put happens after the response (waitUntil): poll for the hit.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := get(path)
		if r.Header.Get("X-Edge-Cache") == "hit" {
			if r.StatusCode != 200 || r.Header.Get("ETag") != first.Header.Get("ETag") || r.Header.Get("X-RateLimit-Remaining") != "" || r.Header.Get("RateLimit") != "" {
				t.Errorf("cache hit: %d etag %q vs %q, per-caller headers %q %q", r.StatusCode, r.Header.Get("ETag"), first.Header.Get("ETag"), r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("RateLimit"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the badge was never answered from the Cache API")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Authenticated and negotiated requests never come from the shared cache.
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer x")
	if r, err := http.DefaultClient.Do(req); err != nil || r.Header.Get("X-Edge-Cache") != "" {
		t.Errorf("an authenticated request was answered from the shared cache: %v", err)
	}
}

// BenchmarkWorkerdCPU reports workerd's CPU time per request (utime+stime from
// /proc): a badge miss starts a Go instance; a hit is answered by the shim.
func BenchmarkWorkerdCPU(b *testing.B) {
	env := edgetest.Env()
	env["AGENTREADY_BADGE_DAILY"] = "100000000"
	base, proc := startService(b, env)
	ticks := func() float64 {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", proc.Pid))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(raw)[strings.LastIndexByte(string(raw), ')')+2:])
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		return (u + s) * 10 // clock ticks of 10 ms (USER_HZ 100) → ms
	}
	for _, c := range []struct {
		name string
		path func(i int) string
	}{
		{"badge-miss", func(i int) string {
			return fmt.Sprintf("/api/badge?url=https://bench.example/%d-%d", time.Now().UnixNano(), i)
		}},
		{"badge-hit", func(int) string { return "/api/badge?url=https://bench.example/hit" }},
		{"api-catalog-miss", func(i int) string { return fmt.Sprintf("/.well-known/api-catalog?v=%d-%d", time.Now().UnixNano(), i) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			http.Get(base + c.path(0)) // warm the module (and the cache for hits)
			time.Sleep(100 * time.Millisecond)
			start := ticks()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := http.Get(base + c.path(i))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %d", c.path(i), resp.StatusCode)
				}
			}
			b.StopTimer()
			b.ReportMetric((ticks()-start)/float64(b.N), "cpu-ms/op")
		})
	}
}

// The Worker must stay deployable on the free plan: wrangler refuses a Worker
// over 3 MiB after gzip at zlib's default level ("exceeded the size limit of
// 3 MiB"), and the build is within about 100 KiB of it.
func TestWorkerFitsTheFreePlan(t *testing.T) {
	root, _, _ := requirements(t)
	raw, err := os.ReadFile(filepath.Join(root, "build", "worker", "app.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(raw)
	zw.Close()
	if gz.Len() > 3<<20 {
		t.Errorf("build/worker/app.wasm is %d bytes gzipped, over the free plan's 3 MiB: keep heavy imports out of the js build", gz.Len())
	}
}
