package workerd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// wrangler (pinned in tests/node) accepts the repository's wrangler.toml and
// what make worker builds: `wrangler deploy --dry-run` runs the [build]
// command, bundles the entry module with Go's wasm_exec.js and app.wasm,
// lists the bindings and stops before uploading. It runs offline: no login
// (nothing is uploaded), no metrics, its settings and logs in a temporary
// directory.
func TestWranglerDeployDryRun(t *testing.T) {
	node, wrangler := testenv.Wrangler(t)
	root := testenv.RepoRoot()
	// wrangler keeps its bundling scratch in .wrangler beside wrangler.toml.
	if _, err := os.Stat(filepath.Join(root, ".wrangler")); os.IsNotExist(err) {
		t.Cleanup(func() { os.RemoveAll(filepath.Join(root, ".wrangler")) })
	}
	tmp, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, wrangler, "deploy", "--dry-run", "--outdir", out)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLOUDFLARE_") && !strings.HasPrefix(kv, "CF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// wrangler's settings go to XDG_CONFIG_HOME; the go command that the
	// [build] step runs keeps reading its own from where it was.
	if os.Getenv("GOENV") == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			cmd.Env = append(cmd.Env, "GOENV="+filepath.Join(dir, "go", "env"))
		}
	}
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+tmp, "WRANGLER_LOG_PATH="+filepath.Join(tmp, "logs"),
		"WRANGLER_SEND_METRICS=false", "CI=true", "NO_UPDATE_NOTIFIER=1")
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wrangler deploy --dry-run: %v\n%s", err, output)
	}
	text := string(output)
	if !strings.Contains(text, "--dry-run: exiting now") {
		t.Errorf("wrangler did not stop at the dry run:\n%s", text)
	}
	// The bundle wrangler would upload: under the free plan's 3 MiB gzip.
	m := regexp.MustCompile(`Total Upload: [\d.]+ KiB / gzip: ([\d.]+) KiB`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no upload size in wrangler's output:\n%s", text)
	}
	t.Logf("wrangler: %s", m[0])
	if kib, _ := strconv.ParseFloat(m[1], 64); kib > 3*1024 {
		t.Errorf("wrangler's bundle is %.0f KiB gzipped, over the free plan's 3 MiB", kib)
	}
	for name := range wranglerVars(t) {
		if !strings.Contains(text, "env."+name+" ") {
			t.Errorf("wrangler does not list the binding %s:\n%s", name, text)
		}
	}
	// It bundled the entry module and uploads make worker's module as is.
	entry, err := os.ReadFile(filepath.Join(out, "index.js"))
	if err != nil || !bytes.Contains(entry, []byte("__agentreadyEdge")) {
		t.Errorf("the bundle's index.js is not the entry module (%v)", err)
	}
	built, err := os.ReadFile(filepath.Join(root, "build", "worker", "app.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	wasm, _ := filepath.Glob(filepath.Join(out, "*app.wasm"))
	if len(wasm) != 1 {
		t.Fatalf("the bundle has %d app.wasm modules, want 1", len(wasm))
	}
	if got, err := os.ReadFile(wasm[0]); err != nil || !bytes.Equal(got, built) {
		t.Errorf("the bundle's %s is not build/worker/app.wasm (%v)", filepath.Base(wasm[0]), err)
	}
}
