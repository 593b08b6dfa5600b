package wasm_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// Every file of the edge is part of the key, and any change to one changes
// it: an edit to edge/ is never tested against a module built before it.
func TestModuleKeyFollowsTheSources(t *testing.T) {
	files, err := edgemodule.Sources()
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
	key := edgemodule.Key(files)
	for _, f := range []string{"edge/badge.go", "edge/site/llms.txt", "cmd/edgewasm/main.go", "go.sum"} {
		orig := files[f]
		files[f] = append(bytes.Clone(orig), ' ')
		if edgemodule.Key(files) == key {
			t.Errorf("a change to %s keeps the key", f)
		}
		files[f] = orig
	}
	if edgemodule.Key(files) != key {
		t.Error("the key is not a function of the sources")
	}
}
