package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// Every real document in the shared corpus loads, with the operations it declares.
func TestCorpusLoads(t *testing.T) {
	want := map[string]struct {
		version string
		ops     int
	}{
		"callback-example-v3.0.json":  {"3.0.0", 1},
		"flight-query-v3.2.yaml":      {"3.2.0", 1},
		"non-oauth-scopes-v3.1.yaml":  {"3.1.0", 1},
		"petstore-expanded-v3.0.json": {"3.0.0", 4},
		"petstore-v3.0.yaml":          {"3.0.0", 3},
		"swagger2-petstore.json":      {"2.0", 3},
		"tictactoe-v3.1.yaml":         {"3.1.0", 3},
		"webhook-example-v3.1.yaml":   {"3.1.0", 0},
		"xkcd-v3.0.yaml":              {"3.0.0", 2},
	}
	files, _ := filepath.Glob("../../../shared/corpus/openapi/*")
	if len(files) != len(want) {
		t.Fatalf("corpus has %d files, table has %d", len(files), len(want))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		s, err := Load(body, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want[name]
		if s.Version != w.version || len(s.Operations) != w.ops {
			t.Errorf("%s: version %q ops %d, want %q %d", name, s.Version, len(s.Operations), w.version, w.ops)
		}
	}
}
