package wasm_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// The tests run the module built from the sources in the tree, never a
// bin/edge.wasm left over from before an edit: the module is built here,
// and kept under a name that is the hash of everything it is built from.

var (
	buildOnce sync.Once
	module    []byte
	buildErr  error
)

// buildFlags are the flags of `make wasm`: the tests run what `make run` runs.
var buildFlags = []string{"build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w"}

// edgeModule is the wasip1 module built from the current sources.
func edgeModule(tb testing.TB) []byte {
	buildOnce.Do(func() { module, buildErr = buildModule() })
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return module
}

// moduleSources lists every file the module is built from, by path relative
// to the repository: the Go files and embedded files of each package of this
// module that cmd/edgewasm imports, and go.mod and go.sum (which pin every
// other package).
func moduleSources() (map[string][]byte, error) {
	root := testenv.RepoRoot()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,GoFiles,EmbedFiles,Standard,Module", "./cmd/edgewasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the edge module's packages (go list): %v", err)
	}
	files := map[string][]byte{}
	add := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir                 string
			GoFiles, EmbedFiles []string
			Standard            bool
			Module              *struct{ Main bool }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Standard || p.Module == nil || !p.Module.Main {
			continue // pinned by go.sum and the Go version
		}
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			if err := add(filepath.Join(p.Dir, f)); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := add(filepath.Join(root, f)); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// sourceKey names a build of these files with this toolchain and these flags.
func sourceKey(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", runtime.Version(), strings.Join(buildFlags, " "))
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func moduleCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agentready", "edge-wasm")
	}
	return filepath.Join(os.TempDir(), "agentready-edge-wasm")
}

func buildModule() ([]byte, error) {
	files, err := moduleSources()
	if err != nil {
		return nil, err
	}
	dir := moduleCacheDir()
	path := filepath.Join(dir, sourceKey(files)+".wasm")
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Built beside its final name and renamed into place, so that test
	// processes building at once never read each other's half-written file.
	tmp, err := os.CreateTemp(dir, "build-*.wasm")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", append(append([]string{}, buildFlags...), "-o", tmp.Name(), "./cmd/edgewasm")...)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the edge module: %v\n%s", err, out)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Every file of the edge is part of the key, and any change to one changes
// it: an edit to edge/ is never tested against a module built before it.
func TestModuleKeyFollowsTheSources(t *testing.T) {
	files, err := moduleSources()
	if err != nil {
		t.Fatal(err)
	}
	root := testenv.RepoRoot()
	var want []string
	for _, pattern := range []string{"edge/*.go", "edge/site/*", "edge/wasi/*.go", "cmd/edgewasm/*.go", "edge/badge/*.go", "edge/token/*.go"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, p := range m {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			rel, _ := filepath.Rel(root, p)
			want = append(want, filepath.ToSlash(rel))
		}
	}
	if len(want) < 15 {
		t.Fatalf("found only %d edge sources: %v", len(want), want)
	}
	for _, f := range want {
		if _, ok := files[f]; !ok {
			t.Errorf("%s is not part of the module's key", f)
		}
	}
	key := sourceKey(files)
	for _, f := range []string{"edge/badge.go", "edge/site/llms.txt", "cmd/edgewasm/main.go", "go.sum"} {
		orig := files[f]
		files[f] = append(bytes.Clone(orig), ' ')
		if sourceKey(files) == key {
			t.Errorf("a change to %s keeps the key", f)
		}
		files[f] = orig
	}
	if sourceKey(files) != key {
		t.Error("the key is not a function of the sources")
	}
}
