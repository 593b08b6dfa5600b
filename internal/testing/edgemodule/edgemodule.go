// Package edgemodule builds the edge's wasip1 module from the sources in
// the tree, as `make wasm` does, for tests: never a bin/edge.wasm left over
// from before an edit. The module is kept under a name that is the hash of
// everything it is built from. It imports nothing of the service, so a test
// binary that hosts the module (package wasm's) does not link the service.
package edgemodule

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

var (
	buildOnce sync.Once
	module    []byte
	buildErr  error
)

// buildFlags are the flags of `make wasm`: the tests run what `make run` runs.
var buildFlags = []string{"build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w"}

// Build is the wasip1 module built from the current sources.
func Build(tb testing.TB) []byte {
	buildOnce.Do(func() { module, buildErr = buildModule() })
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return module
}

// Sources lists every file the module is built from, by path relative
// to the repository: the Go files and embedded files of each package of this
// module that cmd/edgewasm imports, and go.mod and go.sum (which pin every
// other package).
func Sources() (map[string][]byte, error) {
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

// Key names a build of these files with this toolchain and these flags.
func Key(files map[string][]byte) string {
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
	files, err := Sources()
	if err != nil {
		return nil, err
	}
	dir := moduleCacheDir()
	path := filepath.Join(dir, Key(files)+".wasm")
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
