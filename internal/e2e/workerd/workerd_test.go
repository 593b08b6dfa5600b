package workerd_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/stacktest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

const edgeSecret = "workerd-test-edge-secret-0123456789"

// requirements finds build/worker (make worker), the workerd binary pinned in
// tests/node and a Redis (a Worker keeps no allowances of its own). With
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

// logTail keeps what workerd printed (the Worker's console and Go's stderr).
type logTail struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logTail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 256<<10 {
		l.b.WriteString(line + "\n")
	}
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// running is one workerd serving a build of the Worker.
type running struct {
	base string
	proc *os.Process
	logs *logTail
	dir  string            // the build it serves
	env  map[string]string // its bindings
}

// startWorkerd serves the Worker in dir (build/worker, or a variant of it) in
// workerd with env as text bindings, on port.
func startWorkerd(tb testing.TB, dir, workerd string, env map[string]string, port int) *running {
	tb.Helper()
	tmp := tb.TempDir()
	// Every module of the build: the entry module first (workerd's main
	// module), then the others it imports.
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	modules := []string{`(name = "index.mjs", esModule = embed "index.mjs")`}
	for _, e := range entries {
		name := e.Name()
		if err := os.Symlink(filepath.Join(dir, name), filepath.Join(tmp, name)); err != nil {
			tb.Fatal(err)
		}
		switch {
		case name == "index.mjs":
		case strings.HasSuffix(name, ".mjs") || strings.HasSuffix(name, ".js"):
			modules = append(modules, fmt.Sprintf("(name = %q, esModule = embed %q)", name, name))
		case strings.HasSuffix(name, ".wasm"):
			modules = append(modules, fmt.Sprintf("(name = %q, wasm = embed %q)", name, name))
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
  modules = [%s],
  compatibilityDate = "2026-11-17",
  bindings = [%s],
  globalOutbound = "internet",
  cacheApiOutbound = "cache",
);
`, strings.TrimPrefix(cache.srv.URL, "http://"), port, strings.Join(modules, ", "), strings.Join(bindings, ", "))
	if err := os.WriteFile(filepath.Join(tmp, "config.capnp"), []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(workerd, "serve", filepath.Join(tmp, "config.capnp"), "--verbose")
	out, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := &running{base: "http://127.0.0.1:" + strconv.Itoa(port), proc: cmd.Process, logs: &logTail{}, dir: dir, env: env}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.logs.add(sc.Text())
		}
	}()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if tb.Failed() {
			tb.Logf("workerd output:\n%s", w.logs)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return w
		}
		if time.Now().After(deadline) {
			tb.Fatalf("workerd did not listen within 20 s:\n%s", w.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startOrigin starts the origin (with its own embedded store) that the Worker forwards to.
func startOrigin(tb testing.TB, env map[string]string) string {
	return stacktest.Start(tb, env, stack.Options{}).OriginURL
}

// deployment is env completed as a Workers deployment is configured: the
// public base URL (a Worker's fetch cannot pass the caller's Host on), the
// identity secret, Redis for the allowances, and counters of its own.
func deployment(env map[string]string, port int, redisURL string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	out["AGENTREADY_BASE_URL"] = "http://127.0.0.1:" + strconv.Itoa(port)
	out["AGENTREADY_EDGE_SECRET"] = edgeSecret
	out["REDIS_URL"] = redisURL
	// Each started service counts from zero.
	out["AGENTREADY_RATE_PREFIX"] = "workerd-test:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	return out
}

// startService starts an origin and the Worker in front of it.
func startService(tb testing.TB, env map[string]string) *running {
	root, workerd, redisURL := requirements(tb)
	port := freePort(tb)
	out := deployment(env, port, redisURL)
	out["ORIGIN_URL"] = startOrigin(tb, out)
	return startWorkerd(tb, filepath.Join(root, "build", "worker"), workerd, out, port)
}

// The behavioural table, against the GOOS=js build in workerd — the runtime
// Cloudflare Workers run — with Redis over cloudflare:sockets and the origin over fetch.
func TestWorkerdEdge(t *testing.T) {
	requirements(t)
	edgetest.Run(t, func(t *testing.T, env map[string]string) string {
		svc := startService(t, env)
		t.Cleanup(func() {
			// See TestWorkerdInterleavedRequests.
			if strings.Contains(svc.logs.String(), "crossed requests") {
				t.Errorf("a request's Go code ran on another's behalf:\n%s", svc.logs)
			}
		})
		return svc.base
	})
}

// Cacheable public GETs are answered by the entry module from the Cache API,
// without calling Go, and per-caller headers never go into the shared entry.
func TestWorkerdEntryModuleCache(t *testing.T) {
	base := startService(t, edgetest.Env()).base
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

// cpu is workerd's CPU time so far, all its threads together.
func cpu(tb testing.TB, w *running) time.Duration {
	d, err := processCPU(w.proc.Pid)
	if err != nil {
		tb.Skipf("cannot read workerd's CPU time: %v", err)
	}
	return d
}

// quiet waits, within 5 s, until workerd's CPU time stops moving (a cache
// write after the answer, V8 compiling in the background), so that a
// measurement starts from an idle process, and returns the CPU time then.
func quiet(tb testing.TB, w *running) time.Duration {
	last := cpu(tb, w)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(25 * time.Millisecond)
		now := cpu(tb, w)
		if now-last < 100*time.Microsecond {
			return now
		}
		last = now
	}
	return last
}

// fetchOK GETs url and fails tb unless the answer is a 200.
func fetchOK(tb testing.TB, url string) *http.Response {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		tb.Fatalf("%s: %d", url, resp.StatusCode)
	}
	return resp
}

func cpuMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkWorkerdCPU reports workerd's CPU time per request (cpu-ms/op),
// read from the process's CPU clock, on one warm isolate: a badge hit is
// answered by the entry module from the Cache API without calling Go; a
// catalog or badge miss is a call into the isolate's running Go program (the
// badge miss adds the allowance over a socket to Redis, a fetch to the
// origin, whose scan of the unknown site fails, and cache writes).
// first-request starts a fresh workerd for each request and measures the
// isolate's first request, which instantiates the module and starts Go.
func BenchmarkWorkerdCPU(b *testing.B) {
	_, workerd, _ := requirements(b)
	env := edgetest.Env()
	env["AGENTREADY_BADGE_DAILY"] = "100000000"
	svc := startService(b, env)
	unique := func(i int) string { return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(i) }
	warm := func(name string, path func(i int) string, hit bool) {
		b.Run(name, func(b *testing.B) {
			fetchOK(b, svc.base+path(-1)) // the isolate's Go program is running (and the hit is stored)
			for deadline := time.Now().Add(10 * time.Second); hit; {
				if fetchOK(b, svc.base+path(-1)).Header.Get("X-Edge-Cache") == "hit" {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("the badge never came from the Cache API")
				}
				time.Sleep(20 * time.Millisecond)
			}
			start := quiet(b, svc)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if resp := fetchOK(b, svc.base+path(i)); (resp.Header.Get("X-Edge-Cache") == "hit") != hit {
					b.Fatalf("%s: X-Edge-Cache %q", path(i), resp.Header.Get("X-Edge-Cache"))
				}
			}
			b.StopTimer()
			b.ReportMetric(cpuMS(cpu(b, svc)-start)/float64(b.N), "cpu-ms/op")
		})
	}
	warm("catalog-miss", func(i int) string { return "/.well-known/api-catalog?v=" + unique(i) }, false)
	warm("badge-hit", func(int) string { return "/api/badge?url=https://bench.example/hit" }, true)
	b.Run("first-request", func(b *testing.B) {
		var first, settled time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			w := startWorkerd(b, svc.dir, workerd, svc.env, freePort(b))
			start := quiet(b, w)
			b.StartTimer()
			fetchOK(b, w.base+"/.well-known/api-catalog")
			b.StopTimer()
			first += cpu(b, w) - start
			settled += quiet(b, w) - start
			w.proc.Kill()
		}
		b.ReportMetric(cpuMS(first)/float64(b.N), "cpu-ms/op")
		b.ReportMetric(cpuMS(settled)/float64(b.N), "settled-cpu-ms/op")
	})
	// Last: the origin goes on working on the unknown sites after answering,
	// which would slow whatever ran next.
	warm("badge-miss", func(i int) string { return "/api/badge?url=https://bench.example/" + unique(i) }, false)
}

// The Worker must stay deployable on the free plan: wrangler refuses a Worker
// over 3 MiB after gzip at zlib's default level ("exceeded the size limit of
// 3 MiB"). The build is 1.84 MiB; with syumai/workers' fetch client it was
// within 14 KiB of the limit.
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

// wranglerVars are the [vars] of the repository's wrangler.toml.
func wranglerVars(tb testing.TB) map[string]string {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "wrangler.toml"))
	if err != nil {
		tb.Fatal(err)
	}
	_, vars, ok := strings.Cut(string(raw), "\n[vars]\n")
	if !ok {
		tb.Fatal("wrangler.toml has no [vars]")
	}
	if i := strings.Index(vars, "\n["); i >= 0 {
		vars = vars[:i]
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(vars, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func merged(envs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, env := range envs {
		for k, v := range env {
			out[k] = v
		}
	}
	return out
}

// wrangler.toml ships placeholders, not hosts: a deployment that leaves one
// of them, or a required secret, unset answers every request with a 500
// envelope naming the setting, and says once in its log what is wrong.
func TestWorkerdSettings(t *testing.T) {
	root, workerd, redisURL := requirements(t)
	vars := wranglerVars(t)
	for _, name := range []string{"ORIGIN_URL", "AGENTREADY_BASE_URL"} {
		if !strings.HasPrefix(vars[name], "<") {
			t.Errorf("wrangler.toml sets %s to %q: it must ship a placeholder, not a host", name, vars[name])
		}
	}
	if _, ok := vars["REDIS_URL"]; ok {
		t.Error("wrangler.toml sets REDIS_URL, which carries a password: leave it to `wrangler secret put REDIS_URL`")
	}
	origin := map[string]string{"ORIGIN_URL": "http://127.0.0.1:9"}
	base := map[string]string{"AGENTREADY_BASE_URL": "http://127.0.0.1:9"}
	redis := map[string]string{"REDIS_URL": redisURL}
	for _, c := range []struct {
		name    string
		env     map[string]string
		setting string
	}{
		{"wrangler.toml as shipped", vars, "ORIGIN_URL"},
		{"the base URL left as shipped", merged(vars, origin, redis), "AGENTREADY_BASE_URL"},
		{"no REDIS_URL secret", merged(vars, origin, base), "REDIS_URL"},
		{"a REDIS_URL placeholder", merged(vars, origin, base, map[string]string{"REDIS_URL": "<rediss://…>"}), "REDIS_URL"},
		{"the edge's own settings", merged(vars, origin, base, redis, map[string]string{"AGENTREADY_TOKEN_KEYS": "k1:short"}), "AGENTREADY_TOKEN_KEYS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := startWorkerd(t, filepath.Join(root, "build", "worker"), workerd, c.env, freePort(t))
			want := httptest.NewRecorder()
			edge.Misconfigured(want, c.setting)
			for _, path := range []string{"/.well-known/api-catalog", "/api/scan?url=example.com"} {
				resp, err := http.Get(w.base + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 500 || string(body) != want.Body.String() || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), c.setting) {
					t.Errorf("%s: %d %s %s, want the 500 envelope naming %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.setting)
				}
			}
			if n := strings.Count(w.logs.String(), "edge configuration error: "+c.setting+": "); n != 1 {
				t.Errorf("the log names the cause %d times, want once", n)
			}
		})
	}
}

// Without a Go program to ask (here a module that is not one), every request
// is answered with edge.InternalError's envelope by the entry module itself.
func TestWorkerdWithoutGo(t *testing.T) {
	root, workerd, _ := requirements(t)
	dir := t.TempDir()
	for _, f := range []string{"index.mjs", "wasm_exec.js"} {
		if err := os.Symlink(filepath.Join(root, "build", "worker", f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "app.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWorkerd(t, dir, workerd, nil, freePort(t))
	want := httptest.NewRecorder()
	edge.InternalError(want)
	for _, path := range []string{"/api/scan?url=example.com", "/.well-known/api-catalog"} {
		resp, err := http.Get(w.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 500 || string(body) != want.Body.String() || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %q, want edge.InternalError's %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), body, want.Body)
		}
	}
	if !strings.Contains(w.logs.String(), "did not start serving") {
		t.Errorf("the log does not say why:\n%s", w.logs)
	}
}

// When no Redis node accepts a connection (every seed of a Cluster's
// REDIS_URL refused), a request that needs an allowance is the 503
// rate_limiter_unavailable envelope, and the Worker's log says why, without
// a panic.
func TestWorkerdRedisDown(t *testing.T) {
	root, workerd, _ := requirements(t)
	port := freePort(t)
	down := "redis://127.0.0.1:" + strconv.Itoa(freePort(t)) + ",127.0.0.1:" + strconv.Itoa(freePort(t))
	env := deployment(edgetest.Env(), port, down)
	env["ORIGIN_URL"] = startOrigin(t, env)
	w := startWorkerd(t, filepath.Join(root, "build", "worker"), workerd, env, port)
	resp, err := http.Get(w.base + "/api/scan?url=example.com")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), `"code":"rate_limiter_unavailable"`) {
		t.Errorf("with Redis down: %d %s, want 503 rate_limiter_unavailable", resp.StatusCode, body)
	}
	const why = "edge: allowance store: no Redis node of REDIS_URL accepted a connection (2 tried)"
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(w.logs.String(), why) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // workerd's log reaches us after the answer
	}
	if logs := w.logs.String(); !strings.Contains(logs, why) || strings.Contains(logs, "panic") {
		t.Errorf("the Worker's log does not say why, or shows a panic:\n%s", logs)
	}
}
