package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// build/worker is what `make worker` builds from the source as it is now:
// the workerd tests in edge/workers (and wrangler) run build/worker, so a
// stale one would test, and deploy, old code. The flags are the Makefile's
// (-buildvcs=false keeps the module the same whatever else the tree holds).
func TestBuildIsCurrent(t *testing.T) {
	testenv.Quick(t, "the check that build/worker is current (make test builds it first)")
	root := testenv.RepoRoot()
	dir := filepath.Join(root, "build", "worker")
	if _, err := os.Stat(filepath.Join(dir, "app.wasm")); err != nil {
		testenv.Require(t, "build/worker (run make worker)")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "app.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", fresh, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js go build: %v\n%s", err, out)
	}
	for _, f := range []struct{ built, source, fix string }{
		{"app.wasm", fresh, "the Go program"},
		{"index.mjs", filepath.Join(root, "edge", "workers", "index.mjs"), "the entry module"},
		{"wasm_exec.js", filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"), "Go's JS glue, which must match the toolchain"},
	} {
		built, err := os.ReadFile(filepath.Join(dir, f.built))
		if err != nil {
			t.Errorf("build/worker/%s: %v (run make worker)", f.built, err)
			continue
		}
		want, err := os.ReadFile(f.source)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(built, want) {
			t.Errorf("build/worker/%s is not %s as the source builds it now: run make worker", f.built, f.fix)
		}
	}
}
